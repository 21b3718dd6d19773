#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace trainscope {

// The agent's own process, as Prometheus client libraries export it
// (process_* metrics: the names every exporter shares).
struct ProcessStat {
  std::optional<double> cpu_seconds;         // utime + stime
  std::optional<double> resident_bytes;      // rss
  std::optional<double> virtual_bytes;       // vsize
  std::optional<double> start_time_seconds;  // since the Unix epoch
  std::optional<double> open_fds;
  std::optional<double> max_fds;  // RLIMIT_NOFILE soft limit
};

// Parses a /proc/<pid>/stat line: utime (field 14), stime (15), starttime
// (22, clock ticks after boot), vsize (23, bytes), rss (24, pages). The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted after its last ")". `boot_time_seconds` (/proc/stat btime) turns
// starttime into epoch seconds; empty leaves start_time_seconds empty.
// Fields it cannot read stay empty.
ProcessStat ParseProcStat(std::string_view stat, double clock_ticks_per_second,
                          double page_size_bytes,
                          std::optional<double> boot_time_seconds);

// The "btime" line of /proc/stat: the boot time in epoch seconds.
std::optional<double> ParseBootTime(std::string_view proc_stat);

// This process, read from `proc` (default /proc): self/stat, self/fd, and
// the open-files limit.
ProcessStat ReadSelfProcessStat(const std::string& proc = "/proc");

}  // namespace trainscope
