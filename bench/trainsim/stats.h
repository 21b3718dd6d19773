#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
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

  nlohmann::json ToJson() const;
  // Atomic replace, so a reader never sees half a file.
  void WriteFile(const std::string& path) const;

 private:
  std::string pod_, role_;
  std::map<std::string, std::unique_ptr<PeerCounters>> peers_;
  std::atomic<uint64_t> steps_{0};
};

// pod -> peer -> {tx, rx}, as read back from the stats files of a run.
struct PeerBytes {
  uint64_t tx = 0, rx = 0;
};
using GroundTruth = std::map<std::string, std::map<std::string, PeerBytes>>;

GroundTruth ReadGroundTruth(const std::string& stats_dir,
                            std::map<std::string, uint64_t>* steps = nullptr);

// Pairs whose two ends disagree ("a->b: a sent 10, b received 8").
std::vector<std::string> Inconsistencies(const GroundTruth& truth);

}  // namespace trainsim
