#include "trainscope/ascii_case.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

TEST(AsciiCaseTest, FoldsAsciiLettersOnly) {
  EXPECT_EQ(AsciiLower("Worker-0 PS"), "worker-0 ps");
  EXPECT_EQ(AsciiLower(""), "");
  // UTF-8 bytes (and anything past 0x7f) are left as they are.
  EXPECT_EQ(AsciiLower("Ü\xC3\x9C\xFF"), "Ü\xC3\x9C\xFF");
}

TEST(AsciiCaseTest, ComparesIgnoringAsciiCase) {
  EXPECT_TRUE(EqualsIgnoreAsciiCase("GZip", "gzip"));
  EXPECT_TRUE(EqualsIgnoreAsciiCase("", ""));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("gzip", "gzip2"));
  EXPECT_FALSE(EqualsIgnoreAsciiCase("Ü", "ü"));
}

}  // namespace
}  // namespace trainscope
