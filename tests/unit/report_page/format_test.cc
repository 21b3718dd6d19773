#include "report_page/format.h"

#include <gtest/gtest.h>

namespace trainscope::page {
namespace {

TEST(FormatTest, RatesAndPercents) {
  EXPECT_EQ(FormatRate(850), "850 B/s");
  EXPECT_EQ(FormatRate(12'345'678), "12.3 MB/s");
  EXPECT_EQ(FormatRate(1'500), "1.50 kB/s");
  EXPECT_EQ(FormatPercent(0.873), "87%");
  EXPECT_EQ(FormatPercent(0.001), "<1%");
  EXPECT_EQ(FormatPercent(0), "0%");
}

}  // namespace
}  // namespace trainscope::page
