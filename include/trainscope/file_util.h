#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace trainscope {

// Reads a whole (small, pseudo-) file. Empty optional when it cannot be
// opened or read; /proc and /sys files report size 0, so this reads until EOF.
std::optional<std::string> ReadSmallFile(const std::filesystem::path& path);

}  // namespace trainscope
