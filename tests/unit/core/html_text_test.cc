#include "trainscope/html_text.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

TEST(EscapeTest, MarkupCharactersBecomeEntities) {
  EXPECT_EQ(HtmlEscape("<script>alert('x')</script>"),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;");
  EXPECT_EQ(HtmlEscape("a\"b&c"), "a&quot;b&amp;c");
}

TEST(EscapeTest, KeepsValidUtf8AndReplacesInvalidBytes) {
  EXPECT_EQ(HtmlEscape("Übung-工作-🚀"), "Übung-工作-🚀");
  EXPECT_EQ(HtmlEscape(std::string("a\xff"
                                   "b")),
            "a\xEF\xBF\xBD"
            "b");
  // Overlong "<" (0xC0 0xBC) must not survive as a character.
  EXPECT_EQ(HtmlEscape(std::string("\xC0\xBC")), "\xEF\xBF\xBD\xEF\xBF\xBD");
  // A truncated sequence at the end.
  EXPECT_EQ(HtmlEscape(std::string("x\xE5\xB7")), "x\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(EscapeTest, DropsControlCharacters) {
  EXPECT_EQ(HtmlEscape(std::string("a\x01\x1b[31mb\x7f\tc\n", 12)),
            "a[31mb\tc\n");
}

TEST(EllipsizeTest, CutsByCodePoints) {
  EXPECT_EQ(Ellipsize("short", 10), "short");
  EXPECT_EQ(Ellipsize("abcdefghij", 5), "abcd…");
  EXPECT_EQ(Ellipsize("工作工作工作", 3), "工作…");
  EXPECT_EQ(Ellipsize("abc", 3), "abc");
}

}  // namespace
}  // namespace trainscope
