#include "report_page/escape.h"

#include <gtest/gtest.h>

namespace trainscope::page {
namespace {

TEST(EscapeTest, MarkupCharactersBecomeEntities) {
  EXPECT_EQ(Escape("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
  EXPECT_EQ(Escape("a\"b&c"), "a&quot;b&amp;c");
}

TEST(EscapeTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(Escape("Übung-工作-🚀"), "Übung-工作-🚀");
  EXPECT_EQ(Escape(std::string("a\xff"
                               "b")),
            "a\xEF\xBF\xBD"
            "b");
  // Overlong "<" (0xC0 0xBC) must not survive as a character.
  EXPECT_EQ(Escape(std::string("\xC0\xBC")), "\xEF\xBF\xBD\xEF\xBF\xBD");
  // A truncated sequence at the end.
  EXPECT_EQ(Escape(std::string("x\xE5\xB7")), "x\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(EscapeTest, DropsControlCharacters) {
  EXPECT_EQ(Escape(std::string("a\x01\x1b[31mb\x7f\tc\n", 12)), "a[31mb\tc\n");
}

TEST(EllipsizeTest, CutsByCodePoints) {
  EXPECT_EQ(Ellipsize("short", 10), "short");
  EXPECT_EQ(Ellipsize("abcdefghij", 5), "abcd…");
  EXPECT_EQ(Ellipsize("工作工作工作", 3), "工作…");
  EXPECT_EQ(Ellipsize("abc", 3), "abc");
}

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
