#include "profiler/proc_maps.h"

#include <algorithm>
#include <charconv>

namespace trainscope::profiler {
namespace {

bool ParseHex(std::string_view s, uint64_t* out) {
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *out, 16);
  return ec == std::errc() && end == s.data() + s.size();
}

// Splits off the next space-delimited field.
std::string_view NextField(std::string_view* line) {
  size_t start = line->find_first_not_of(' ');
  if (start == std::string_view::npos) {
    *line = {};
    return {};
  }
  line->remove_prefix(start);
  size_t end = line->find(' ');
  std::string_view field = line->substr(0, end);
  line->remove_prefix(end == std::string_view::npos ? line->size() : end);
  return field;
}

bool ParseLine(std::string_view line, MapEntry* out) {
  std::string_view range = NextField(&line);
  std::string_view perms = NextField(&line);
  std::string_view offset = NextField(&line);
  std::string_view dev = NextField(&line);
  std::string_view inode = NextField(&line);
  size_t dash = range.find('-');
  if (dash == std::string_view::npos || perms.size() < 3 || dev.empty()) {
    return false;
  }
  if (!ParseHex(range.substr(0, dash), &out->start) ||
      !ParseHex(range.substr(dash + 1), &out->end) ||
      !ParseHex(offset, &out->offset)) {
    return false;
  }
  auto [end, ec] =
      std::from_chars(inode.data(), inode.data() + inode.size(), out->inode);
  if (ec != std::errc()) return false;
  out->executable = perms[2] == 'x';
  size_t path_start = line.find_first_not_of(' ');
  out->path = path_start == std::string_view::npos
                  ? std::string()
                  : std::string(line.substr(path_start));
  return out->end > out->start;
}

}  // namespace

std::vector<MapEntry> ParseProcMaps(std::string_view text) {
  std::vector<MapEntry> maps;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    MapEntry entry;
    if (ParseLine(line, &entry)) maps.push_back(std::move(entry));
  }
  std::sort(maps.begin(), maps.end(), [](const MapEntry& a, const MapEntry& b) {
    return a.start < b.start;
  });
  return maps;
}

const MapEntry* FindMapping(const std::vector<MapEntry>& maps,
                            uint64_t address) {
  auto it = std::upper_bound(
      maps.begin(), maps.end(), address,
      [](uint64_t addr, const MapEntry& m) { return addr < m.start; });
  if (it == maps.begin()) return nullptr;
  --it;
  return address < it->end && it->executable ? &*it : nullptr;
}

bool IsFileBacked(const MapEntry& map) {
  return map.inode != 0 && !map.path.empty() && map.path.front() == '/' &&
         map.path.find(" (deleted)") == std::string::npos;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace trainscope::profiler
