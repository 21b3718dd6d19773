#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace trainscope::profiler {

// One line of /proc/<pid>/maps.
struct MapEntry {
  uint64_t start = 0;
  uint64_t end = 0;
  uint64_t offset = 0;  // file offset of `start`
  bool executable = false;
  uint64_t inode = 0;
  std::string path;  // "" for anonymous; "[vdso]", "[stack]", ...
};

// Parses /proc/<pid>/maps text; malformed lines are skipped. Pure.
std::vector<MapEntry> ParseProcMaps(std::string_view text);

// The executable mapping holding `address`, or null. `maps` sorted by start
// (as the kernel writes them).
const MapEntry* FindMapping(const std::vector<MapEntry>& maps,
                            uint64_t address);

// A mapping backed by a regular file we can open (not [vdso], anonymous,
// memfd or deleted files).
bool IsFileBacked(const MapEntry& map);

// "/usr/lib/x86_64-linux-gnu/libc.so.6" -> "libc.so.6".
std::string_view BaseName(std::string_view path);

}  // namespace trainscope::profiler
