#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include "profiler/profiler_bpf.h"
#include "profiler/profiler_options.h"
#include "profiler/symbolizer.h"
#include "profiler/top_functions.h"
#include "trainscope/host_paths.h"
#include "trainscope/pod.h"
#include "trainscope/status.h"

namespace trainscope::profiler {

// Low-rate CPU profiling of every training pod (a pod with a known role) on
// the node, drained each sampling cycle into a bounded per-pod window of
// leaf functions (the function the CPU was in, user space first). One BPF
// object for all pods, retargeted as pods come and go. The diagnoses'
// evidence and GET /api/v1/profile/top read it. Thread-safe.
class ContinuousProfiler {
 public:
  explicit ContinuousProfiler(ContinuousOptions options);
  ~ContinuousProfiler();

  // One cycle: attach (once), follow the pod list, drain, aggregate.
  Status Update(const PodList& pods);

  TopFunctionWindow::Top TopOf(const std::string& pod_uid, size_t n);
  // Off-CPU wait sites ("blocked <function>" / "runnable <function>"),
  // valued in nanoseconds; empty unless options().offcpu.
  TopFunctionWindow::Top TopWaitsOf(const std::string& pod_uid, size_t n);
  const ContinuousOptions& options() const { return options_; }
  // The symbol cache of the processes it has seen (not thread-safe: call
  // between updates).
  Symbolizer::Stats symbol_cache() const { return symbolizer_.stats(); }

 private:
  Status Retarget(const PodList& pods);
  void ForgetProcesses(std::chrono::steady_clock::time_point now);
  std::string LeafFunction(const RawStackCount& raw);
  // Drains one object into pod uid -> site -> value.
  Status DrainInto(ProfilerBpf& bpf, bool offcpu,
                   std::chrono::steady_clock::time_point now,
                   std::map<std::string, std::map<std::string, int64_t>>* out);

  const ContinuousOptions options_;
  std::unique_ptr<ProfilerBpf> bpf_;
  std::unique_ptr<ProfilerBpf> bpf_off_;  // null unless options_.offcpu
  Symbolizer symbolizer_;
  std::map<uint64_t, std::string> pod_of_cgroup_;  // any cgroup -> pod uid
  // Retargeting walks the cgroup tree: done when the training pods change,
  // when a sample names a cgroup not seen (a new container), and every
  // kRetargetEvery cycles, not every cycle.
  std::set<std::string> targeted_uids_;
  bool unknown_cgroup_seen_ = false;
  int cycles_since_retarget_ = 0;
  // tgid -> when its maps were read and its pod: re-read every minute (new
  // libraries), forgotten when the process stops showing up or its pod
  // leaves (with the symbols of files no other process maps).
  struct Captured {
    std::chrono::steady_clock::time_point at;
    std::string pod_uid;
  };
  std::map<uint32_t, Captured> captured_;
  std::mutex mu_;  // guards window_
  TopFunctionWindow window_;
  TopFunctionWindow waits_;
};

}  // namespace trainscope::profiler
