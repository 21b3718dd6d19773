#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>

#include "trainscope/host_paths.h"

namespace trainscope::profiler {

// On-demand profiles (/api/v1/profile), from --profiler and --profile-max-*.
struct ProfilerOptions {
  HostPaths host;
  std::filesystem::path cgroup2_path;  // "" = found under the cgroup root
  int max_seconds = 60;                // longest on-demand profile
  int max_concurrent = 2;  // on-demand profiles running at once (node)
  int default_hz = 99;
  int max_hz = 1000;
};

// The continuous low-rate profile of training pods (--profile-continuous*).
struct ContinuousOptions {
  HostPaths host;
  std::filesystem::path cgroup2_path;
  int hz = 19;  // per CPU
  std::chrono::seconds window{300};
  size_t functions_per_drain = 32;  // per pod, per drain
  // Also off-CPU (sched_switch): where each pod's threads wait. Off by
  // default: the program runs on every context switch of the node.
  bool offcpu = false;
};

}  // namespace trainscope::profiler
