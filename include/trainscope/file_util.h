#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "trainscope/status.h"

namespace trainscope {

// Reads a whole (small, pseudo-) file. Empty optional when it cannot be
// opened or read (errno tells why); /proc and /sys files report size 0, so
// this reads until EOF.
std::optional<std::string> ReadSmallFile(const std::filesystem::path& path);

// The same for `name` relative to an open directory: one path component to
// resolve instead of the whole path, which is what makes reading many files
// of one cgroup cheap.
std::optional<std::string> ReadSmallFileAt(int dir_fd, const char* name);

// Reads an open (small, pseudo-) file again from its start. A seq_file
// (cgroupfs, procfs) regenerates its content on a read at offset 0, so a
// file kept open is read each cycle without resolving its name again.
std::optional<std::string> RereadSmallFile(int fd);

// Reads a configuration file a person named (a web config, a key, a token):
// it must be a regular file (a symlink to one, as in a mounted Secret, is
// fine) of at most `max_bytes`. A directory, a FIFO, a device or a socket is
// an error that says what the path is instead, and opening never blocks (a
// FIFO without a writer would hang start-up). Errors start with the path.
Status ReadConfigFile(const std::filesystem::path& path, size_t max_bytes,
                      std::string* out);

}  // namespace trainscope
