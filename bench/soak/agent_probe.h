#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace trainscope::soak {

// What the kernel says about the agent process: resident memory (VmRSS,
// split into anonymous memory and file pages such as the binary's code,
// which grow as code paths are first run) and open file descriptors
// (entries of /proc/PID/fd).
struct ProcessUsage {
  uint64_t rss_bytes = 0;
  uint64_t rss_anon_bytes = 0;
  uint64_t rss_file_bytes = 0;
  int open_fds = 0;
};
std::optional<ProcessUsage> ReadProcessUsage(pid_t pid);

// One BPF map the process holds open, found through /proc/PID/fdinfo (so
// no bpftool with pid support is needed), with its live entries.
struct BpfMapCount {
  uint32_t id = 0;
  std::string name;
  uint32_t type = 0;
  std::string type_name;  // "hash", "lru_hash", ...
  uint32_t max_entries = 0;
  // Keys a full walk found; -1 for maps without keys to walk (arrays,
  // ring buffers: their size is fixed at load).
  int64_t entries = -1;
  // The kernel itself evicts entries of LRU maps; nothing deletes them
  // when a pod goes, so they return to baseline only by eviction.
  bool lru = false;
};
std::vector<BpfMapCount> AgentBpfMaps(pid_t pid);

// Series of a /metrics body: all `trainscope_` samples, and those with a
// label value naming one of `gone` (deleted pods' names and uids).
struct SeriesCount {
  size_t total = 0;
  size_t of_gone = 0;
  std::vector<std::string> examples;  // a few offending lines
};
SeriesCount CountSeries(const std::string& metrics,
                        const std::set<std::string>& gone);

// GET http://127.0.0.1:port/path; nullopt unless the answer is 200.
std::optional<std::string> HttpGet(int port, const std::string& path);

}  // namespace trainscope::soak
