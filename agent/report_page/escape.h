#pragma once

#include <string>
#include <string_view>

namespace trainscope::page {

// Text and attribute values for HTML and SVG: &, <, >, " and ' become
// entities, control characters other than tab/newline are dropped and bytes
// that are not valid UTF-8 become U+FFFD. Every string that came from the
// cluster (pod names, labels, annotations, diagnosis text) goes through this
// before it reaches the page.
std::string Escape(std::string_view text);

// At most `max_chars` code points of valid UTF-8 text, with "…" replacing
// the rest; for labels inside fixed-size boxes (the full text goes into a
// <title>). Not escaped.
std::string Ellipsize(std::string_view text, size_t max_chars);

// "12.3 MB/s", "850 B/s": bytes per second with SI prefixes.
std::string FormatRate(double bytes_per_second);

// "87%" (whole percent; "<1%" for a small non-zero ratio).
std::string FormatPercent(double ratio);

}  // namespace trainscope::page
