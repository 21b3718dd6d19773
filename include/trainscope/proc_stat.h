#pragma once

#include <optional>
#include <string_view>

namespace trainscope {

// What /proc/<pid>/stat says of a process (the fields Prometheus client
// libraries export as process_*, and its scheduler state).
struct ProcessStat {
  // Field 3: R running, S sleeping, D disk sleep (uninterruptible), T
  // stopped (a signal), t traced, Z zombie, I idle kernel thread, ...
  std::optional<char> state;
  std::optional<double> cpu_seconds;         // utime + stime
  std::optional<double> resident_bytes;      // rss
  std::optional<double> virtual_bytes;       // vsize
  std::optional<double> start_time_seconds;  // since the Unix epoch
  std::optional<double> open_fds;
  std::optional<double> max_fds;  // RLIMIT_NOFILE soft limit
};

// Parses a /proc/<pid>/stat line: state (field 3), utime (14), stime (15),
// starttime (22, clock ticks after boot), vsize (23, bytes), rss (24,
// pages). The command name (field 2) may hold spaces and parentheses, so
// fields are counted after its last ")". `boot_time_seconds` (/proc/stat
// btime) turns starttime into epoch seconds; empty leaves
// start_time_seconds empty. Fields it cannot read stay empty.
ProcessStat ParseProcStat(std::string_view stat, double clock_ticks_per_second,
                          double page_size_bytes,
                          std::optional<double> boot_time_seconds);

// The "btime" line of /proc/stat: the boot time in epoch seconds.
std::optional<double> ParseBootTime(std::string_view proc_stat);

}  // namespace trainscope
