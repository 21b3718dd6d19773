#pragma once

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "profiler/profile.h"
#include "profiler/profiler_bpf.h"
#include "profiler/profiler_options.h"
#include "profiler/symbolizer.h"
#include "trainscope/host_paths.h"
#include "trainscope/pod.h"
#include "trainscope/status.h"

namespace trainscope::profiler {

struct ProfileRequest {
  std::string namespace_name;
  std::string pod;
  double seconds = 10;
  ProfileKind kind = ProfileKind::kCpu;
  int hz = 99;
  // When set and true, whoever asked is gone: the profile ends early (its
  // BPF program detached, its slot freed) and its outcome is dropped.
  std::shared_ptr<const std::atomic<bool>> abandoned;
};

// What a profile request ends with: 200 and a profile, or an HTTP status
// and a message a person can act on.
struct ProfileOutcome {
  int http_status = 200;
  std::string error;
  Profile profile;
};

// On-demand profiles of one pod at a time each, at most max_concurrent at
// once, every one with its own BPF object, perf events and maps (so two
// profiles never see each other's samples and each cleans up alone).
// Symbols are cached across profiles. Thread-safe.
class ProfilerService {
 public:
  explicit ProfilerService(ProfilerOptions options);
  ~ProfilerService();
  ProfilerService(const ProfilerService&) = delete;
  ProfilerService& operator=(const ProfilerService&) = delete;

  const ProfilerOptions& options() const { return options_; }

  // Whether perf_event + BPF work here: probed once (the first call loads
  // and attaches a CPU profile with no targets), then remembered.
  Status Health();

  // Checks health and the caps, then profiles on a thread of its own and
  // calls `done` there; an immediate refusal (409/429/503) calls `done`
  // before returning.
  void Start(const ProfileRequest& request, const PodInfo& pod,
             std::function<void(ProfileOutcome)> done);
  // Runs a profile on the caller's thread (tests, benchmarks); no caps.
  ProfileOutcome Run(const ProfileRequest& request, const PodInfo& pod);
  // Cancels running profiles (they end early with what they have) and joins
  // their threads.
  void Stop();

  size_t running() const;
  Symbolizer::Stats symbol_stats() const { return symbolizer_.stats(); }

 private:
  ProfileOutcome RunProfile(const ProfileRequest& request, const PodInfo& pod);
  bool WaitOrCancelled(std::chrono::steady_clock::time_point until);
  void ReapFinished();

  const ProfilerOptions options_;
  Symbolizer symbolizer_;
  std::mutex health_mu_;
  std::optional<Status> health_;

  mutable std::mutex mu_;
  std::condition_variable cancel_cv_;
  bool stopping_ = false;
  std::set<std::string> busy_pods_;  // "namespace/pod"
  struct Worker {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Worker> workers_;
};

// "cpu" | "offcpu" -> kind.
std::optional<ProfileKind> ParseProfileKind(const std::string& text);

}  // namespace trainscope::profiler
