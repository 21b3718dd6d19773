#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "agents.h"
#include "cluster_verify.h"
#include "node.h"
#include "prometheus_runner.h"
#include "run_results.h"
#include "scenario.h"
#include "step_rates.h"
#include "verify_match.h"

namespace trainsim {

// What `verify` watches while a scenario runs: at each poll the agents'
// reports (and, for a cluster, every few polls the cluster view through
// Prometheus, whole and triaged) and the pods' true step counts; judged
// once at the end.
class RunObserver {
 public:
  // `agents` and `prometheus` (null for one node) outlive the observer;
  // `cli` is the trainscope CLI for the cluster view.
  RunObserver(const Scenario& scenario, const SimNode& node,
              std::vector<AgentProcess>& agents, PrometheusRunner* prometheus,
              std::string cli);

  // One poll, `elapsed` seconds into the run. The final poll (the pods
  // still running) prints the reports instead of a progress line.
  void Poll(double elapsed, bool final_poll);

  // The per-worker step-rate table (true against estimated).
  std::string StepRateTable() const { return rates_.Table(); }
  // The verdict JSON; failed (an agent died, the run was interrupted)
  // fails it whatever was seen.
  nlohmann::ordered_json Verdict(bool failed) const;
  // The results file (verify --results) for `verdict`.
  nlohmann::ordered_json Results(const nlohmann::ordered_json& verdict) const;

 private:
  void PollAgents(double elapsed, bool final_poll, std::string* status,
                  size_t* got);
  void PollClusterView(double elapsed, bool final_poll, std::string* status);
  // Each warning or critical diagnosis a view shows for the first time,
  // with its summary, printed under the progress line: an unexpected one
  // in a failed run then says what it measured.
  void AnnounceNew(const std::string& view, const nlohmann::json& report);

  const Scenario& scenario_;
  const SimNode& node_;
  std::vector<AgentProcess>& agents_;
  PrometheusRunner* prometheus_;
  const std::string cli_;
  const bool cluster_;
  VerifyTracker tracker_;
  ClusterVerify views_;
  StepRateTracker rates_;
  DiagnosisLog diagnoses_;
  std::set<std::string> announced_;  // view, kind, pod or node
  std::string announcements_;        // lines for the next progress line
  int polls_ = 0;
};

}  // namespace trainsim
