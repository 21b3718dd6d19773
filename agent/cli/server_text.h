#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace trainscope::cli {

// How much of a server's text an error message quotes.
inline constexpr size_t kServerTextQuote = 300;

// Text that came from a server (an error body, a JSON "error" field, a label
// value) made safe to print on a terminal (TerminalSafe, core), quoted at
// most `max_bytes` long.
std::string ServerText(std::string_view raw,
                       size_t max_bytes = kServerTextQuote);

// A copy of `value` with every string and object key passed through
// ServerText (no length cap): the table output prints names and summaries
// that an agent or Prometheus supplied.
nlohmann::json ServerTextJson(const nlohmann::json& value);

}  // namespace trainscope::cli
