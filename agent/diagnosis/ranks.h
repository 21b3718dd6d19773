#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "diagnosis/settings.h"
#include "diagnosis/window.h"

namespace trainscope::diagnosis {

// The ranks of one training job without parameter servers (allreduce:
// PyTorchJob, MPIJob/Horovod, TF MultiWorkerMirrored): its workers and
// master. Chief, evaluator, launcher and scheduler coordinate and are never
// ranks, so they are never compared with the ranks.
struct RankJob {
  std::string namespace_name;
  std::string training_job;
  JobKind job_kind = JobKind::kUnknown;
  Framework framework = Framework::kUnknown;
  std::vector<const PodStats*> ranks;  // sorted by pod name
  // Each rank's exchange with the other ranks (bytes/s, both directions);
  // only ranks whose flows show a rank peer.
  std::map<std::string, double> exchange;  // by "namespace/pod"
};

// Jobs in the window with at least one rank and no PS (no pod of the job is
// a PS and no rank talks to a PS) whose ranks talk to each other or whose
// kind has no PS (PyTorchJob, MPIJob, a PyTorch framework).
std::vector<RankJob> AllreduceJobs(const WindowStats& stats);

// The roles that are ranks of an allreduce job (worker, master).
bool IsRankRole(Role role);

// One cause a pod shows more than its peers.
struct StandOut {
  std::string cause;   // catalog word: cpu_throttled, cpu_starved, ...
  std::string metric;  // evidence key: throttled_ratio, cpu_stall_ratio, ...
  double value = 0;
  double peer_median = 0;
  size_t peers = 0;  // peers with a value for the metric
  std::string rule;  // "ratio" (2-4 ranks) or "robust_z" (>= robust_from)
  std::optional<double> z;
  Finding::Level level = Finding::Level::kHold;
};

// Every cause in which `pod` stands out from `peers` (the other ranks or
// workers, not including `pod`), entering causes first, in catalog order:
// cpu_throttled, cpu_starved (PSI cpu, then usage at the limit), io_stall,
// memory_pressure (PSI memory, then working set at the limit). Empty when
// nothing stands out or no peer has data.
std::vector<StandOut> CausesStandingOut(
    const PodStats& pod, const std::vector<const PodStats*>& peers,
    const DiagnosisSettings& all);

// Evidence entry for the causes: {metric: {value, peer_median, rule, ...}}.
nlohmann::json CauseEvidence(const std::vector<StandOut>& causes);

// The causes' cost in synchronous training (docs/diagnosis.md): every rank
// waits for the slowest, so the stall time the rank has beyond its peers'
// median is time the whole job waits. Stall fractions (PSI) are time: those
// standing out among `causes` are summed (stalls of two resources may
// overlap, so the sum is a bound). Only when none stands out, the first
// cause's ratio (throttled periods, CPU or memory use against the limit)
// stands in, as a looser bound: a period throttled for a millisecond counts
// whole. Sets cost and severity.
void SetCauseImpact(Diagnosis& d, const std::vector<StandOut>& causes);

}  // namespace trainscope::diagnosis
