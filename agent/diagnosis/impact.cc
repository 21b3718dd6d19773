#include "diagnosis/impact.h"

#include <algorithm>
#include <set>
#include <vector>

#include "diagnosis/detectors.h"

namespace trainscope::diagnosis {
namespace {

bool SameJob(const PodMeta& a, const PodMeta& b) {
  return !a.training_job.empty() && a.namespace_name == b.namespace_name &&
         a.training_job == b.training_job;
}

// (exchange share, bytes/s) of every exchange between a step-running pod of
// `job` and `peer_key`, seen from the step runners, else from the peer.
std::vector<PeerCounters> ExchangesWith(const WindowStats& stats,
                                        const PodMeta& job,
                                        const std::string& peer_key) {
  std::vector<PeerCounters> out;
  for (const auto& [key, pod] : stats.pods) {
    if (key == peer_key || !RunsTrainingSteps(pod.meta.role) ||
        !SameJob(pod.meta, job))
      continue;
    auto it = pod.peer_rates.find(peer_key);
    if (it != pod.peer_rates.end() && it->second.exchange_seconds > 0)
      out.push_back(it->second);
  }
  if (!out.empty()) return out;
  auto peer = stats.pods.find(peer_key);
  if (peer == stats.pods.end()) return out;
  for (const auto& [other, rates] : peer->second.peer_rates) {
    if (RunsTrainingSteps(PeerRole(stats, other)) && rates.exchange_seconds > 0)
      out.push_back(rates);
  }
  return out;
}

// "_x_job_share" before a bound's suffix: the scaled cost is still a bound.
void MarkJobShare(std::string& model) {
  model.insert(model.ends_with(kUpperBoundSuffix)
                   ? model.size() - kUpperBoundSuffix.size()
                   : model.size(),
               "_x_job_share");
}

double SecondsPerByte(const PeerCounters& c) {
  const double bytes = c.receive_bytes + c.transmit_bytes;
  return bytes > 0 ? c.exchange_seconds / bytes : 0;
}

}  // namespace

Severity SeverityOfCost(double cost) {
  if (cost < kInfoBelowCost) return Severity::kInfo;
  if (cost > kCriticalAboveCost) return Severity::kCritical;
  return Severity::kWarning;
}

double SpeedupOfCost(double cost) {
  return 1.0 / (1.0 - std::clamp(cost, 0.0, kMaxCost));
}

double CostOfSpeedup(double speedup) {
  return speedup <= 1 ? 0 : std::min(kMaxCost, 1.0 - 1.0 / speedup);
}

void SetImpact(Diagnosis& d, double cost, std::string_view model,
               Severity at_least) {
  cost = std::clamp(cost, 0.0, kMaxCost);
  d.evidence["cost_fraction"] = Round4(cost);
  d.evidence["expected_speedup"] = Round4(SpeedupOfCost(cost));
  d.evidence["cost_model"] = std::string(model);
  Severity severity = SeverityOfCost(cost);
  if (model.ends_with(kUpperBoundSuffix))
    severity = std::min(severity, Severity::kWarning);
  d.severity = std::max(severity, at_least);
}

std::optional<double> WorkerExchangeShare(const WindowStats& stats,
                                          const PodMeta& job,
                                          const std::string& peer_key) {
  std::vector<double> shares;
  for (const PeerCounters& c : ExchangesWith(stats, job, peer_key))
    shares.push_back(std::min(1.0, c.exchange_seconds));
  if (shares.empty()) return std::nullopt;
  return Median(shares);
}

std::optional<double> WorkerRequestWaitShare(const WindowStats& stats,
                                             const PodMeta& job,
                                             const std::string& peer_key) {
  std::vector<double> shares;
  for (const auto& [key, pod] : stats.pods) {
    if (key == peer_key || !RunsTrainingSteps(pod.meta.role) ||
        !SameJob(pod.meta, job))
      continue;
    auto it = pod.peer_rates.find(peer_key);
    if (it != pod.peer_rates.end() && it->second.wait_seconds > 0)
      shares.push_back(std::min(1.0, it->second.wait_seconds));
  }
  if (shares.empty()) return std::nullopt;
  return Median(shares);
}

std::optional<double> PsLinkBusyRatio(const PodStats& ps) {
  std::optional<double> busy;
  for (bool receive : {true, false})
    if (auto use = LinkUtilization(ps, receive))
      busy = std::max(busy.value_or(0), use->ratio);
  return busy;
}

std::optional<WorkerWait> WorkerWaitShare(const WindowStats& stats,
                                          const PodMeta& job,
                                          const std::string& ps_key,
                                          std::optional<double> ps_link_busy) {
  const auto exchange = WorkerExchangeShare(stats, job, ps_key);
  if (!exchange) return std::nullopt;
  WorkerWait wait;
  wait.share = wait.exchange_share = *exchange;
  // The job's step runners' compute share: what they spend not waiting.
  std::optional<double> waiting;
  std::vector<double> computing;
  for (const auto& [key, pod] : stats.pods) {
    if (key == ps_key || !RunsTrainingSteps(pod.meta.role) ||
        !SameJob(pod.meta, job) || !pod.cpu_cores)
      continue;
    computing.push_back(std::clamp(
        std::max(*pod.cpu_cores, pod.gpu_utilization_ratio.value_or(0)), 0.0,
        1.0));
  }
  if (!computing.empty()) waiting = 1 - Median(computing);
  wait.request_wait_share = WorkerRequestWaitShare(stats, job, ps_key);
  if (wait.request_wait_share) {
    // An answer the socket buffer took whole goes on over the wire while
    // the worker computes: no wait beyond the time it does not compute.
    const double requests =
        std::min(*wait.request_wait_share, waiting.value_or(1.0));
    if (requests > wait.share) {
      wait.share = requests;
      wait.source = WorkerWait::Source::kRequests;
      wait.raised = true;
    }
  }
  if (!ps_link_busy || *ps_link_busy < kSaturatedPsBusyRatio || !waiting)
    return wait;
  if (*waiting > wait.share) {
    wait.share = *waiting;
    wait.source = WorkerWait::Source::kSaturatedLink;
    wait.raised = true;
  }
  return wait;
}

namespace {

// CPU use against the limit, else the node's cores; empty when unknown.
std::optional<double> CpuUseRatio(const PodStats& pod) {
  const std::optional<double> capacity =
      pod.cpu_limit_cores ? pod.cpu_limit_cores : pod.node_cpu_count;
  if (!pod.cpu_cores || !capacity || *capacity <= 0) return std::nullopt;
  return *pod.cpu_cores / *capacity;
}

double WaitPerByte(const PeerCounters& c) {
  const double bytes = c.receive_bytes + c.transmit_bytes;
  return bytes > 0 ? c.wait_seconds / bytes : 0;
}

}  // namespace

CpuGain PsCpuGain(const WindowStats& stats, const PodMeta& job,
                  const std::string& ps_key, double stall) {
  CpuGain gain{std::clamp(stall, 0.0, 1.0)};
  auto roster = stats.job_ps.find(PodKey(job.namespace_name, job.training_job));
  if (roster == stats.job_ps.end()) return gain;
  std::set<std::string> roomy;
  for (const auto& name : roster->second) {
    const std::string key = PodKey(job.namespace_name, name);
    if (key == ps_key) continue;
    auto it = stats.pods.find(key);
    const auto use =
        it != stats.pods.end() ? CpuUseRatio(it->second) : std::nullopt;
    if (!use || *use < kPsCpuRoomRatio) roomy.insert(key);
  }
  std::vector<double> here, elsewhere;
  for (const auto& [key, pod] : stats.pods) {
    if (!RunsTrainingSteps(pod.meta.role) || !SameJob(pod.meta, job)) continue;
    for (const auto& [peer, rates] : pod.peer_rates) {
      const double pace = WaitPerByte(rates);
      if (pace <= 0) continue;
      if (peer == ps_key) here.push_back(pace);
      if (roomy.count(peer)) elsewhere.push_back(pace);
    }
  }
  if (here.empty() || elsewhere.empty()) return gain;
  gain.pace_ratio = Median(elsewhere) / Median(here);
  // The comparison measures what the stall only bounds: PSI counts a
  // cgroup stalled while any of its tasks waits (a hog's threads too), not
  // how late the PS answers.
  gain.factor = std::max(0.0, 1 - *gain.pace_ratio);
  gain.from_pace = true;
  return gain;
}

std::string NoteWorkerWait(const WorkerWait& wait, nlohmann::json& evidence) {
  evidence["worker_exchange_share"] = Round4(wait.exchange_share);
  if (wait.request_wait_share)
    evidence["worker_request_wait_share"] = Round4(*wait.request_wait_share);
  if (wait.raised) evidence["worker_wait_share"] = Round4(wait.share);
  switch (wait.source) {
    case WorkerWait::Source::kRequests:
      return "worker_request_wait_share";
    case WorkerWait::Source::kSaturatedLink:
      return "saturated_ps_wait_share";
    case WorkerWait::Source::kExchange:
      break;
  }
  return "worker_exchange_share";
}

std::optional<double> PodExchangeShare(const WindowStats& stats,
                                       const std::string& pod_key) {
  auto it = stats.pods.find(pod_key);
  if (it == stats.pods.end()) return std::nullopt;
  double busy = 0;
  bool any = false;
  for (const auto& [peer, rates] : it->second.peer_rates) {
    busy += rates.exchange_seconds;
    any = any || rates.exchange_seconds > 0;
  }
  if (!any) return std::nullopt;
  return std::min(1.0, busy);
}

std::optional<ExchangePace> PeerExchangePace(const WindowStats& stats,
                                             const PodMeta& job,
                                             const std::string& peer_key) {
  std::vector<double> here, elsewhere;
  for (const PeerCounters& c : ExchangesWith(stats, job, peer_key))
    if (double p = SecondsPerByte(c); p > 0) here.push_back(p);
  for (const auto& [key, pod] : stats.pods) {
    if (!RunsTrainingSteps(pod.meta.role) || !SameJob(pod.meta, job)) continue;
    for (const auto& [peer, rates] : pod.peer_rates) {
      if (peer == peer_key || peer == key) continue;
      if (double p = SecondsPerByte(rates); p > 0) elsewhere.push_back(p);
    }
  }
  if (here.empty() || elsewhere.empty()) return std::nullopt;
  return ExchangePace{Median(here), Median(elsewhere)};
}

std::optional<double> PodExchangePace(const PodStats& pod) {
  double busy = 0, bytes = 0;
  for (const auto& [peer, r] : pod.peer_rates) {
    busy += r.exchange_seconds;
    bytes += r.receive_bytes + r.transmit_bytes;
  }
  if (busy <= 0 || bytes <= 0) return std::nullopt;
  return busy / bytes;
}

double JobCostOfPod(const WindowStats& stats, const std::string& pod_key,
                    double pod_cost, std::string& model) {
  auto it = stats.pods.find(pod_key);
  if (it == stats.pods.end() || !it->second.steps_per_second ||
      !RunsTrainingSteps(it->second.meta.role))
    return pod_cost;
  const PodMeta& meta = it->second.meta;
  const double own = *it->second.steps_per_second;
  std::vector<double> peers;
  double total = own;
  for (const auto& [key, pod] : stats.pods) {
    if (key == pod_key || !pod.steps_per_second ||
        !RunsTrainingSteps(pod.meta.role) || !SameJob(pod.meta, meta))
      continue;
    peers.push_back(*pod.steps_per_second);
    total += *pod.steps_per_second;
  }
  if (peers.empty() || total <= 0) return pod_cost;
  const double median = Median(peers);
  // Within 10% of its peers. With parameter servers each worker steps at
  // its own pace (TF2's ParameterServerStrategy, TF1 without
  // SyncReplicasOptimizer): the pod keeps up, so its stall is off the
  // critical path and costs the job nothing. Without them (allreduce) every
  // rank steps together: the stall is every rank's.
  if (own >= 0.9 * median) {
    auto ps = stats.job_ps.find(PodKey(meta.namespace_name, meta.training_job));
    if (ps == stats.job_ps.end() || ps->second.empty()) return pod_cost;
    MarkJobShare(model);
    return 0;
  }
  const double fixed =
      std::min(median, own / (1 - std::clamp(pod_cost, 0.0, kMaxCost)));
  MarkJobShare(model);
  return CostOfSpeedup((total - own + std::max(own, fixed)) / total);
}

std::optional<double> StallShare(const PodStats& pod,
                                 std::string_view resource) {
  std::optional<double> ratio;
  if (resource == "cpu") ratio = pod.cpu_pressure_ratio;
  if (resource == "io") ratio = pod.io_pressure_ratio;
  if (resource == "memory") ratio = pod.memory_pressure_ratio;
  if (!ratio) return std::nullopt;
  return std::clamp(*ratio, 0.0, 1.0);
}

}  // namespace trainscope::diagnosis
