#pragma once

#include <string>
#include <string_view>

namespace trainscope {

// Case folding for protocol and Kubernetes tokens (header names, encodings,
// label values, role names): ASCII letters only, whatever the C locale, so
// a byte of UTF-8 text is never changed.
std::string AsciiLower(std::string_view text);
bool EqualsIgnoreAsciiCase(std::string_view a, std::string_view b);

}  // namespace trainscope
