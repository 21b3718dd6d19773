#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainsim {

struct PeerCounters {
  std::atomic<uint64_t> tx_bytes{0};
  std::atomic<uint64_t> rx_bytes{0};
};

// The ground truth of one pod process: bytes written to and read from the
// sockets of each peer pod (application payload plus the 8-byte requests),
// and completed steps. The peer set is fixed at construction, so counting
// needs no lock.
class PodStats {
 public:
  PodStats(std::string pod, std::string role,
           const std::vector<std::string>& peers);
  PeerCounters* Peer(const std::string& name);  // nullptr for a stranger
  std::atomic<uint64_t>& steps() { return steps_; }
  // One more completed step, stamped with the wall clock: a reader then
  // gets rates from step completions, not from when it happened to look
  // (the file is written once a second, the supervisor polls every few).
  void CountStep();

  nlohmann::json ToJson() const;
  // Atomic replace, so a reader never sees half a file.
  void WriteFile(const std::string& path) const;

 private:
  std::string pod_, role_;
  std::map<std::string, std::unique_ptr<PeerCounters>> peers_;
  std::atomic<uint64_t> steps_{0};
  // Guards the pair (steps_, last_step_epoch_s_) so a file never holds a
  // count with the time of an earlier step.
  mutable std::mutex step_mu_;
  double last_step_epoch_s_ = 0;  // 0: no step stamped yet
};

// pod -> peer -> {tx, rx}, as read back from the stats files of a run.
struct PeerBytes {
  uint64_t tx = 0, rx = 0;
};
using GroundTruth = std::map<std::string, std::map<std::string, PeerBytes>>;

GroundTruth ReadGroundTruth(const std::string& stats_dir,
                            std::map<std::string, uint64_t>* steps = nullptr);

// A pod's completed steps and when the last of them completed (epoch
// seconds; 0 when unknown: no step yet, or a program pod).
struct StepCount {
  uint64_t steps = 0;
  double last_step_epoch_s = 0;
};
std::map<std::string, StepCount> ReadStepCounts(const std::string& stats_dir);

// Pairs whose two ends disagree ("a->b: a sent 10, b received 8").
std::vector<std::string> Inconsistencies(const GroundTruth& truth);

}  // namespace trainsim
