#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace trainscope {

struct CpuTimes {
  double busy_seconds = 0;  // user nice system irq softirq steal
  double idle_seconds = 0;  // idle iowait
  unsigned cpu_count = 0;   // "cpuN" lines
};

// /proc/stat; ticks converted with `ticks_per_second` (USER_HZ).
std::optional<CpuTimes> ParseProcStat(std::string_view text,
                                      double ticks_per_second);

struct MemInfo {
  std::optional<uint64_t> total_bytes;
  std::optional<uint64_t> available_bytes;
};

// /proc/meminfo ("MemTotal:  16318240 kB").
MemInfo ParseMemInfo(std::string_view text);

// /sys/class/net/<if>/speed is Mbit/s; -1 or garbage means unknown.
std::optional<double> ParseLinkSpeedBytesPerSecond(std::string_view text);

}  // namespace trainscope
