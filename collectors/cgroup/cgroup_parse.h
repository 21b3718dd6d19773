#pragma once

// Pure parsers for cgroup v1 and v2 interface files. None of them throws or
// touches the file system; malformed input yields std::nullopt.

#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "trainscope/snapshot.h"

namespace trainscope::cgroup {

// A decimal unsigned integer, surrounding whitespace allowed
// (cpuacct.usage, memory.current, memory.usage_in_bytes, ...).
std::optional<uint64_t> ParseUint(std::string_view text);

// The value of `key` in a flat-keyed file ("key value" per line: cpu.stat,
// memory.stat, memory.events, memory.oom_control). Empty when the key is
// missing or its value is not an unsigned integer.
std::optional<uint64_t> FlatKeyedValue(std::string_view content,
                                       std::string_view key);

// CPU bandwidth: quota empty means unlimited.
struct CpuBandwidth {
  std::optional<uint64_t> quota_us;
  uint64_t period_us = 0;

  // quota / period; empty when unlimited.
  std::optional<double> cores() const;
};

// v2 cpu.max: "max 100000" or "50000 100000".
std::optional<CpuBandwidth> ParseCpuMax(std::string_view content);
// v1 cpu.cfs_quota_us ("-1" = unlimited) and cpu.cfs_period_us.
std::optional<CpuBandwidth> ParseCfsBandwidth(std::string_view quota_us,
                                              std::string_view period_us);

// A memory limit: bytes empty means unlimited.
struct MemoryLimit {
  std::optional<uint64_t> bytes;
};

// v2 memory.max: "max" or bytes.
std::optional<MemoryLimit> ParseMemoryMax(std::string_view content);
// v1 memory.limit_in_bytes. The kernel reports "no limit" as LONG_MAX rounded
// down to the page size (9223372036854771712 with 4 KiB pages, other values
// with larger pages), so anything from 2^62 on is taken as unlimited.
std::optional<MemoryLimit> ParseMemoryLimitInBytes(std::string_view content);

struct IoBytes {
  uint64_t read = 0;
  uint64_t write = 0;
};

// v2 io.stat: "MAJ:MIN rbytes=.. wbytes=.. rios=.. ..." per device, summed.
// An empty file (no IO yet) is zero.
std::optional<IoBytes> ParseIoStat(std::string_view content);
// v1 blkio.throttle.io_service_bytes[_recursive]: "MAJ:MIN Read N" lines,
// Read and Write summed over devices; per-device and trailing Totals ignored.
std::optional<IoBytes> ParseBlkioServiceBytes(std::string_view content);

// PSI file (cpu.pressure, memory.pressure, io.pressure): the "total=" of the
// "some" and "full" lines (microseconds in the file) in seconds. Requires a
// "some" line; "full" is optional (cpu.pressure before Linux 5.13).
std::optional<PressureSample> ParsePressure(std::string_view content);

// cgroup.procs: one PID per line.
std::optional<std::vector<int>> ParseCgroupProcs(std::string_view content);

}  // namespace trainscope::cgroup
