#include "node/node_parse.h"

#include <charconv>
#include <cstdlib>
#include <string>

namespace trainscope {
namespace {

std::string_view NextLine(std::string_view& text) {
  size_t nl = text.find('\n');
  std::string_view line = text.substr(0, nl);
  text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
  return line;
}

std::string_view NextToken(std::string_view& s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) {
    s.remove_prefix(1);
  }
  size_t end = s.find_first_of(" \t");
  std::string_view token = s.substr(0, end);
  s.remove_prefix(end == std::string_view::npos ? s.size() : end);
  return token;
}

bool ToU64(std::string_view s, uint64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

}  // namespace

std::optional<CpuTimes> ParseProcStat(std::string_view text,
                                      double ticks_per_second) {
  if (ticks_per_second <= 0) return std::nullopt;
  std::optional<CpuTimes> out;
  unsigned cpus = 0;
  while (!text.empty()) {
    std::string_view line = NextLine(text);
    std::string_view name = NextToken(line);
    if (name.rfind("cpu", 0) != 0) continue;
    if (name != "cpu") {
      ++cpus;
      continue;
    }
    // user nice system idle iowait irq softirq steal [guest guest_nice]; guest
    // time is already inside user, so it is not added again.
    uint64_t v[8];
    for (auto& field : v) {
      if (!ToU64(NextToken(line), field)) return std::nullopt;
    }
    CpuTimes t;
    t.busy_seconds =
        (v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / ticks_per_second;
    t.idle_seconds = (v[3] + v[4]) / ticks_per_second;
    out = t;
  }
  if (out) out->cpu_count = cpus;
  return out;
}

MemInfo ParseMemInfo(std::string_view text) {
  MemInfo info;
  while (!text.empty()) {
    std::string_view line = NextLine(text);
    std::string_view key = NextToken(line);
    uint64_t value;
    if (!ToU64(NextToken(line), value)) continue;
    uint64_t scale = NextToken(line) == "kB" ? 1024 : 1;
    if (key == "MemTotal:") info.total_bytes = value * scale;
    if (key == "MemAvailable:") info.available_bytes = value * scale;
  }
  return info;
}

std::optional<double> ParseLinkSpeedBytesPerSecond(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) {
    text.remove_suffix(1);
  }
  uint64_t mbit;
  if (!ToU64(text, mbit) || mbit == 0) return std::nullopt;  // "-1" fails
  return static_cast<double>(mbit) * 1e6 / 8;
}

}  // namespace trainscope
