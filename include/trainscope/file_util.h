#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace trainscope {

// Reads a whole (small, pseudo-) file. Empty optional when it cannot be
// opened or read (errno tells why); /proc and /sys files report size 0, so
// this reads until EOF.
std::optional<std::string> ReadSmallFile(const std::filesystem::path& path);

// The same for `name` relative to an open directory: one path component to
// resolve instead of the whole path, which is what makes reading many files
// of one cgroup cheap.
std::optional<std::string> ReadSmallFileAt(int dir_fd, const char* name);

}  // namespace trainscope
