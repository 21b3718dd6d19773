#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace trainscope {

// RFC 3339 in UTC with second precision ("2026-11-21T21:05:00Z"), as the
// report's `generated_at` and `since` fields use it.
std::string Rfc3339(std::chrono::system_clock::time_point t);

// Unix seconds of an RFC 3339 timestamp as the Kubernetes API writes them
// ("2026-11-21T21:05:00Z"; fractional seconds and a numeric offset are
// accepted too, as RFC 3339 allows). Empty when the text is not one.
std::optional<double> ParseRfc3339(std::string_view text);

}  // namespace trainscope
