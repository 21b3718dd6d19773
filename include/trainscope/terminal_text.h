#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace trainscope {

// Text from outside (a server's error body, a client's request path) made
// safe to print on a terminal or echo in an answer: C0 and C1 control
// characters (ESC included, so no escape sequence survives), DEL, Unicode
// bidi and line separators, and bytes that are not UTF-8 are shown as \xNN
// or \u{NNNN}; plain spaces and printable UTF-8 stay. Trailing whitespace is
// dropped and the result is at most about `max_bytes` long ("... (N bytes)"
// marks a cut).
std::string TerminalSafe(std::string_view raw, size_t max_bytes);

}  // namespace trainscope
