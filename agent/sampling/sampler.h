#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sampling/history.h"
#include "trainscope/collector.h"
#include "trainscope/log_limiter.h"

namespace trainscope {

// Runs every collector once per interval on its own clock and publishes the
// snapshot to History. Scrapes never trigger collection.
class Sampler {
 public:
  Sampler(std::vector<CollectorPtr> collectors, HostPaths host,
          const PodTable& pods, History& history,
          std::chrono::milliseconds interval);
  ~Sampler();
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  // Called on the sampling thread after each snapshot is published (the
  // diagnosis engine runs here, once per sample). Set before Start().
  void SetAfterCycle(std::function<void()> hook) {
    after_cycle_ = std::move(hook);
  }

  // Pods of other nodes that collectors may use to name peers (flows); set
  // before Start(). Not owned; null = none.
  void SetPeerPods(const PodTable* peer_pods) { peer_pods_ = peer_pods; }

  void Start();
  // Wakes the sampling thread and joins it; a cycle in progress finishes.
  void Stop();
  // One cycle, synchronously (tests and benchmarks call this directly).
  std::shared_ptr<const Snapshot> RunOnce();
  // CPU time the sampling thread has used in all cycles so far.
  double cycle_cpu_seconds_total() const;
  uint64_t cycles_total() const;

 private:
  void Loop();
  // Logs a collector's status only when it changes, so a missing GPU or a
  // broken file is reported once, not every 5 seconds.
  void LogTransition(const CollectorRun& run);

  std::vector<CollectorPtr> collectors_;
  HostPaths host_;
  const PodTable& pods_;
  const PodTable* peer_pods_ = nullptr;
  History& history_;
  const std::chrono::milliseconds interval_;

  std::mutex mu_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::thread thread_;

  std::mutex run_mu_;  // one cycle at a time (RunOnce vs. the loop)
  uint64_t sequence_ = 0;
  std::map<std::string, std::pair<Status::Code, std::string>> last_status_;
  // A failure whose message changes every cycle (a count, a time) would
  // otherwise log every cycle.
  LogLimiter failure_log_;
  std::atomic<double> cpu_seconds_{0};
  std::atomic<uint64_t> cycles_{0};
  std::function<void()> after_cycle_;
};

}  // namespace trainscope
