#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trainscope {

// Text and attribute values for HTML and SVG: &, <, >, " and ' become
// entities, control characters other than tab/newline are dropped and bytes
// that are not valid UTF-8 become U+FFFD. Every string that came from the
// cluster or from a profiled process (pod names, labels, annotations,
// diagnosis text, symbol names) goes through this before it reaches a page
// or an SVG.
std::string HtmlEscape(std::string_view text);

// At most `max_chars` code points of valid UTF-8 text, with "…" replacing
// the rest; for labels inside fixed-size boxes (the full text goes into a
// <title>). Not escaped.
std::string Ellipsize(std::string_view text, size_t max_chars);

}  // namespace trainscope
