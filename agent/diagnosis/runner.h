#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "diagnosis/analysis.h"
#include "diagnosis/goodput.h"
#include "diagnosis/snapshot_window.h"
#include "trainscope/snapshot.h"

namespace trainscope::diagnosis {

// The node view: the agent hands it its history after every sample; it runs
// the detectors through the engine and keeps what the report and /metrics
// read. Thread-safe (the sampler writes, HTTP handlers read).
class DiagnosisRunner {
 public:
  DiagnosisRunner(std::string node, DiagnosisSettings settings = {});

  // `history` oldest first, the newest snapshot last. Called by one thread
  // (the sampler after each cycle); the readers below may run on any.
  void Update(const std::vector<std::shared_ptr<const Snapshot>>& history);
  std::vector<Diagnosis> Active() const;
  // PS traffic per job of the latest window: the one computation behind the
  // report's ps_traffic_share, hot_parameter_server and the
  // trainscope_ps_traffic_* metrics.
  std::vector<JobTraffic> Jobs() const;
  // Step rates per job of the latest window (the report's scaling view).
  std::vector<JobSpeed> Speeds() const;
  // The scaling forecast per PS job of the latest window.
  std::vector<JobHeadroom> Headroom() const;
  // Time and lost time per job with pods on this node (goodput.h).
  std::vector<JobGoodput> Goodput() const;
  const DiagnosisSettings& settings() const { return settings_; }

 private:
  // Under mu_, after the engine's update.
  void AccountGoodput(
      const std::vector<std::shared_ptr<const Snapshot>>& history);

  const std::string node_;
  const DiagnosisSettings settings_;
  SlidingSnapshotWindow window_;  // only Update (one thread) touches it
  ExchangeMemory memory_;         // likewise
  mutable std::mutex mu_;
  Engine engine_;
  std::vector<Diagnosis> active_;
  std::vector<JobTraffic> jobs_;
  std::vector<JobSpeed> speeds_;
  std::vector<JobHeadroom> headroom_;
  GoodputAccounting goodput_;
};

}  // namespace trainscope::diagnosis
