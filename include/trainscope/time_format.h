#pragma once

#include <chrono>
#include <string>

namespace trainscope {

// RFC 3339 in UTC with second precision ("2026-11-21T21:05:00Z"), as the
// report's `generated_at` and `since` fields use it.
std::string Rfc3339(std::chrono::system_clock::time_point t);

}  // namespace trainscope
