#include "cgroup/cgroup_parse.h"

#include <charconv>
#include <limits>

namespace trainscope::cgroup {
namespace {

constexpr std::string_view kSpace = " \t\r\n";

std::string_view Trim(std::string_view s) {
  const auto begin = s.find_first_not_of(kSpace);
  if (begin == std::string_view::npos) return {};
  const auto end = s.find_last_not_of(kSpace);
  return s.substr(begin, end - begin + 1);
}

// Calls fn(line) for each non-blank line; stops early when fn returns false.
template <typename Fn>
bool ForEachLine(std::string_view content, Fn&& fn) {
  while (!content.empty()) {
    const auto nl = content.find('\n');
    const auto line = Trim(content.substr(0, nl));
    content = nl == std::string_view::npos ? std::string_view{}
                                           : content.substr(nl + 1);
    if (!line.empty() && !fn(line)) return false;
  }
  return true;
}

// Splits a line into whitespace-separated fields.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> out;
  while (true) {
    const auto begin = line.find_first_not_of(" \t");
    if (begin == std::string_view::npos) break;
    line = line.substr(begin);
    const auto end = line.find_first_of(" \t");
    out.push_back(line.substr(0, end));
    if (end == std::string_view::npos) break;
    line = line.substr(end);
  }
  return out;
}

std::optional<uint64_t> ParseUintExact(std::string_view s) {
  if (s.empty() || s.front() < '0' || s.front() > '9') return std::nullopt;
  uint64_t value = 0;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return value;
}

bool AddChecked(uint64_t& sum, uint64_t value) {
  if (value > std::numeric_limits<uint64_t>::max() - sum) return false;
  sum += value;
  return true;
}

// "8:0" or "259:1".
bool IsDevice(std::string_view s) {
  const auto colon = s.find(':');
  return colon != std::string_view::npos &&
         ParseUintExact(s.substr(0, colon)) &&
         ParseUintExact(s.substr(colon + 1));
}

std::optional<uint64_t> PositivePeriod(std::string_view s) {
  const auto period = ParseUintExact(s);
  if (!period || *period == 0) return std::nullopt;
  return period;
}

}  // namespace

std::optional<uint64_t> ParseUint(std::string_view text) {
  return ParseUintExact(Trim(text));
}

std::optional<uint64_t> FlatKeyedValue(std::string_view content,
                                       std::string_view key) {
  std::optional<uint64_t> found;
  ForEachLine(content, [&](std::string_view line) {
    const auto fields = Fields(line);
    if (fields.size() != 2 || fields[0] != key) return true;
    found = ParseUintExact(fields[1]);
    return false;
  });
  return found;
}

std::optional<double> CpuBandwidth::cores() const {
  if (!quota_us || period_us == 0) return std::nullopt;
  return static_cast<double>(*quota_us) / static_cast<double>(period_us);
}

std::optional<CpuBandwidth> ParseCpuMax(std::string_view content) {
  const auto fields = Fields(Trim(content));
  if (fields.size() != 2) return std::nullopt;
  CpuBandwidth bw;
  const auto period = PositivePeriod(fields[1]);
  if (!period) return std::nullopt;
  bw.period_us = *period;
  if (fields[0] != "max") {
    bw.quota_us = ParseUintExact(fields[0]);
    if (!bw.quota_us || *bw.quota_us == 0) return std::nullopt;
  }
  return bw;
}

std::optional<CpuBandwidth> ParseCfsBandwidth(std::string_view quota_us,
                                              std::string_view period_us) {
  CpuBandwidth bw;
  const auto period = PositivePeriod(Trim(period_us));
  if (!period) return std::nullopt;
  bw.period_us = *period;
  const auto quota = Trim(quota_us);
  if (quota != "-1") {
    bw.quota_us = ParseUintExact(quota);
    if (!bw.quota_us || *bw.quota_us == 0) return std::nullopt;
  }
  return bw;
}

std::optional<MemoryLimit> ParseMemoryMax(std::string_view content) {
  const auto text = Trim(content);
  if (text == "max") return MemoryLimit{};
  const auto bytes = ParseUintExact(text);
  if (!bytes) return std::nullopt;
  return MemoryLimit{bytes};
}

std::optional<MemoryLimit> ParseMemoryLimitInBytes(std::string_view content) {
  const auto bytes = ParseUint(content);
  if (!bytes) return std::nullopt;
  if (*bytes >= (uint64_t{1} << 62)) return MemoryLimit{};
  return MemoryLimit{bytes};
}

std::optional<IoBytes> ParseIoStat(std::string_view content) {
  IoBytes sum;
  const bool ok = ForEachLine(content, [&](std::string_view line) {
    const auto fields = Fields(line);
    if (fields.empty() || !IsDevice(fields[0])) return false;
    for (size_t i = 1; i < fields.size(); ++i) {
      const auto eq = fields[i].find('=');
      if (eq == std::string_view::npos) return false;
      const auto key = fields[i].substr(0, eq);
      // Other keys may be fractional (iocost's "cost.vrate=135.04").
      if (key != "rbytes" && key != "wbytes") continue;
      const auto value = ParseUintExact(fields[i].substr(eq + 1));
      if (!value ||
          !AddChecked(key == "rbytes" ? sum.read : sum.write, *value)) {
        return false;
      }
    }
    return true;
  });
  if (!ok) return std::nullopt;
  return sum;
}

std::optional<IoBytes> ParseBlkioServiceBytes(std::string_view content) {
  IoBytes sum;
  const bool ok = ForEachLine(content, [&](std::string_view line) {
    const auto fields = Fields(line);
    if (fields.size() == 2 && fields[0] == "Total") {
      return ParseUintExact(fields[1]).has_value();
    }
    if (fields.size() != 3 || !IsDevice(fields[0])) return false;
    const auto value = ParseUintExact(fields[2]);
    if (!value) return false;
    if (fields[1] == "Read") return AddChecked(sum.read, *value);
    if (fields[1] == "Write") return AddChecked(sum.write, *value);
    return true;  // Sync, Async, Discard, Total of one device
  });
  if (!ok) return std::nullopt;
  return sum;
}

std::optional<PressureSample> ParsePressure(std::string_view content) {
  PressureSample out;
  const bool ok = ForEachLine(content, [&](std::string_view line) {
    const auto fields = Fields(line);
    if (fields.empty()) return false;
    std::optional<double>* target = nullptr;
    if (fields[0] == "some") target = &out.some_seconds;
    if (fields[0] == "full") target = &out.full_seconds;
    if (target == nullptr || target->has_value()) return false;
    for (size_t i = 1; i < fields.size(); ++i) {
      if (!fields[i].starts_with("total=")) continue;
      const auto usec = ParseUintExact(fields[i].substr(6));
      if (!usec) return false;
      *target = static_cast<double>(*usec) / 1e6;
    }
    return target->has_value();
  });
  if (!ok || !out.some_seconds) return std::nullopt;
  return out;
}

std::optional<std::vector<int>> ParseCgroupProcs(std::string_view content) {
  std::vector<int> pids;
  const bool ok = ForEachLine(content, [&](std::string_view line) {
    const auto pid = ParseUintExact(line);
    if (!pid || *pid == 0 ||
        *pid > static_cast<uint64_t>(std::numeric_limits<int>::max())) {
      return false;
    }
    pids.push_back(static_cast<int>(*pid));
    return true;
  });
  if (!ok) return std::nullopt;
  return pids;
}

}  // namespace trainscope::cgroup
