// The exposition writer must produce exactly what prometheus-cpp's
// TextSerializer produces, edge values included.
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <cmath>
#include <limits>

#include "exporter/family_builder.h"

namespace trainscope {
namespace {

TEST(TextFormatTest, IdenticalToTextSerializerOnEdgeValues) {
  std::vector<prometheus::MetricFamily> families;
  FamilyBuilder counters("test_edge_total",
                         "Help with a backslash \\ and a\nnewline.",
                         prometheus::MetricType::Counter);
  const double values[] = {0.0,
                           -0.0,
                           1.0,
                           0.1,
                           1e-9,
                           123456789012345678.0,
                           18446744073709551615.0,
                           std::numeric_limits<double>::quiet_NaN(),
                           std::numeric_limits<double>::infinity(),
                           -std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::min(),
                           std::numeric_limits<double>::max()};
  int i = 0;
  for (double v : values) {
    counters.Add({{"case", std::to_string(i++)},
                  {"pod", "quote\" backslash\\ newline\n"}},
                 v);
  }
  counters.MoveInto(families);
  FamilyBuilder gauges("test_edge_ratio", "", prometheus::MetricType::Gauge);
  gauges.Add({}, 0.875).Add({{"a", ""}}, 2.5e-3);
  gauges.MoveInto(families);

  std::string ours;
  AppendTextFormat(families, ours);
  EXPECT_EQ(ours, prometheus::TextSerializer().Serialize(families));
}

TEST(TextFormatTest, EmptyInputGivesEmptyText) {
  std::string out;
  AppendTextFormat({}, out);
  EXPECT_EQ(out, prometheus::TextSerializer().Serialize({}));
}

}  // namespace
}  // namespace trainscope
