// straggler_worker: in synchronous and asynchronous PS training alike, a
// worker that exchanges much less with the PS than its peers makes fewer
// steps; with sync replicas everybody waits for it. In synchronous training
// every worker moves the same bytes per second (all wait for the slowest),
// so there the straggler is found by the cause it shows instead.
// A chief is never a straggler: a TF2 ParameterServerStrategy chief only
// coordinates and exchanges little by design.
#include <fmt/format.h>

#include <cmath>

#include "diagnosis/detectors.h"
#include "diagnosis/exchange_quiet.h"
#include "diagnosis/impact.h"
#include "diagnosis/ranks.h"

namespace trainscope::diagnosis {
namespace {

// The visible reason a worker is slow, in the catalog's words.
std::vector<std::string> LikelyCauses(const PodStats& pod,
                                      const DiagnosisSettings& all) {
  std::vector<std::string> causes;
  if (pod.throttled_ratio && pod.cpu_periods &&
      *pod.cpu_periods >= all.throttle.min_periods &&
      *pod.throttled_ratio >= all.throttle.enter_ratio) {
    causes.push_back("cpu_throttled");
  }
  const bool memory_full =
      pod.memory_working_set_bytes && pod.memory_limit_bytes &&
      *pod.memory_limit_bytes > 0 &&
      *pod.memory_working_set_bytes / *pod.memory_limit_bytes >=
          all.memory.enter_ratio;
  if (memory_full || (pod.memory_pressure_ratio &&
                      *pod.memory_pressure_ratio >= all.memory.psi_enter)) {
    causes.push_back("memory_pressure");
  }
  for (bool receive : {true, false}) {
    auto use = LinkUtilization(pod, receive);
    if (use && use->ratio >= all.network.enter_ratio) {
      causes.push_back("slow_link");
      break;
    }
  }
  if (pod.io_pressure_ratio &&
      *pod.io_pressure_ratio >= all.input_io.psi_enter) {
    causes.push_back("io_stall");
  }
  return causes;
}

std::string CauseAdvice(const std::string& cause, const std::string& pod) {
  if (cause == "cpu_throttled") {
    return fmt::format("Raise the CPU limit of {}: it is throttled.", pod);
  }
  if (cause == "cpu_starved") {
    return fmt::format(
        "Give {} the CPU its peers get: it uses all of its CPU limit or "
        "waits for a CPU on a busy node (raise the limit, set requests = "
        "limits, or move it off the busy node).",
        pod);
  }
  if (cause == "memory_pressure") {
    return fmt::format(
        "Raise the memory limit of {} or shrink its input buffers "
        "(tf.data prefetch/shuffle sizes): it stalls on memory.",
        pod);
  }
  if (cause == "slow_link") {
    return fmt::format(
        "Check the bandwidth of {}'s link and its kubernetes.io/*-bandwidth "
        "annotations: it runs at its link capacity.",
        pod);
  }
  return fmt::format(
      "Check {}'s input storage: it stalls on IO (cache or prefetch the "
      "data: tf.data .cache() / .prefetch()).",
      pod);
}

// The job's workers and masters with their PS exchange: never the chief.
std::map<std::string, double> ComparableWorkers(const DetectorInput& in,
                                                const JobTraffic& job) {
  std::map<std::string, double> out;
  for (const auto& [key, rate] : job.worker_exchange) {
    auto it = in.recent.pods.find(key);
    if (it != in.recent.pods.end() && it->second.meta.role == Role::kChief) {
      continue;
    }
    out.emplace(key, rate);
  }
  return out;
}

// Synchronous training shows as every worker exchanging about the same.
bool LooksSynchronous(const std::map<std::string, double>& workers,
                      const StragglerSettings& s, const SyncPsSettings& sync) {
  if (workers.size() < sync.min_workers) return false;
  std::vector<double> rates;
  for (const auto& [_, r] : workers) rates.push_back(r);
  const double median = Median(rates);
  if (median < s.min_median_bytes_per_second) return false;
  for (double r : rates) {
    if (std::fabs(r - median) > sync.similar_spread * median) return false;
  }
  return true;
}

// A worker that stopped exchanging within the straggler window (now, or
// before steps resumed) is judged by training_stalled, not as slow.
bool StoppedInWindow(const DetectorInput& in, const PodStats& recent,
                     const StragglerSettings& s, const DiagnosisSettings& all) {
  const size_t intervals = std::max<size_t>(all.window_samples, 2) - 1;
  const double interval = recent.span_seconds / static_cast<double>(intervals);
  const double within = std::max(
      all.stall.resume_settle_s,
      interval *
          static_cast<double>(std::max<size_t>(s.window_samples, 2) - 1));
  const auto& pods = in.baseline.get().pods;
  auto it = pods.find(PodKey(recent.meta.namespace_name, recent.meta.pod));
  return it != pods.end() &&
         StoppedRecently(it->second, StopLine(it->second, interval, all.stall),
                         within);
}

void DetectByCause(const DetectorInput& in, const JobTraffic& job,
                   const std::map<std::string, double>& workers,
                   const StragglerSettings& s, const DiagnosisSettings& all,
                   std::vector<Finding>& out) {
  std::vector<const PodStats*> pods;
  for (const auto& [key, _] : workers) {
    if (auto it = in.recent.pods.find(key); it != in.recent.pods.end()) {
      pods.push_back(&it->second);
    }
  }
  for (const PodStats* pod : pods) {
    // A spinning or blocked worker that stopped stands out in CPU or IO
    // before its rate falls apart from the others'.
    if (StoppedInWindow(in, *pod, s, all)) continue;
    std::vector<const PodStats*> peers;
    for (const PodStats* p : pods) {
      if (p != pod) peers.push_back(p);
    }
    auto causes = CausesStandingOut(*pod, peers, all);
    if (causes.empty()) continue;
    const StandOut& top = causes.front();
    Finding f;
    f.level = top.level;
    f.diagnosis = NewDiagnosis(kStragglerWorker, Severity::kWarning, pod->meta);
    auto& ev = f.diagnosis.evidence;
    ev = {{"rule", "cause"},
          {"cause", top.cause},
          {"workers", workers.size()},
          {"synchronous", true},
          {"causes", CauseEvidence(causes)},
          {"likely_causes", std::vector<std::string>{top.cause}}};
    SetCauseImpact(f.diagnosis, causes);
    f.diagnosis.summary = fmt::format(
        "Worker {} holds back synchronous job {}: {} {:.2f} against its {} "
        "peers' median {:.2f} ({}); every worker waits for it each step.",
        pod->meta.pod, job.training_job, top.metric, top.value, top.peers,
        top.peer_median, top.cause);
    f.diagnosis.recommendations.push_back(
        CauseAdvice(top.cause, pod->meta.pod));
    f.diagnosis.recommendations.push_back(fmt::format(
        "Synchronous training waits for the slowest worker: fix or "
        "reschedule {} (delete the pod), or let the step go on without it "
        "(TF1 SyncReplicasOptimizer(replicas_to_aggregate < "
        "total_num_replicas) as backup workers).",
        pod->meta.pod));
    out.push_back(std::move(f));
  }
}

// Asynchronous workers each add their own steps: brought up to its peers'
// median, the straggler adds (median - own) steps/s to the job's total.
// From the step rates when known, else with the exchange rate as the step
// rate's stand-in (every step moves the same bytes).
void SetStragglerImpact(const DetectorInput& in, const std::string& key,
                        const PodMeta& meta, double exchange_ratio,
                        size_t workers, Diagnosis& d) {
  std::optional<double> own;
  std::vector<double> peers;
  for (const auto& [k, p] : in.recent.pods) {
    if (!p.steps_per_second || !RunsTrainingSteps(p.meta.role) ||
        p.meta.namespace_name != meta.namespace_name ||
        p.meta.training_job != meta.training_job)
      continue;
    if (k == key) {
      own = p.steps_per_second;
    } else {
      peers.push_back(*p.steps_per_second);
    }
  }
  if (own && !peers.empty()) {
    double total = *own;
    for (double r : peers) total += r;
    const double median = Median(peers);
    d.evidence["steps_per_second"] = Round4(*own);
    d.evidence["peer_median_steps_per_second"] = Round4(median);
    d.evidence["job_steps_per_second"] = Round4(total);
    const double gain = std::max(0.0, median - *own);
    SetImpact(d, CostOfSpeedup((total + gain) / total), "job_step_rate");
    return;
  }
  const double n = static_cast<double>(workers);
  SetImpact(d, CostOfSpeedup(n / (n - 1 + std::max(0.0, exchange_ratio))),
            "exchange_rate");
}

// A worker of another node, seen only from this node's PS: who it is.
PodMeta RemoteWorkerMeta(const std::string& key, const JobTraffic& job) {
  PodMeta m;
  m.namespace_name = job.namespace_name;
  m.pod = key.substr(key.find('/') + 1);
  m.training_job = job.training_job;
  m.role = Role::kWorker;
  return m;
}

// The job's PS on `node` put at least this share of its NIC's fuller
// direction on it: the NIC is full of the job's own exchanges, so its
// workers take turns there. A NIC that other tenants fill slows every
// worker crossing it alike and leaves a straggler its own deficit.
constexpr double kJobShareOfAFullNic = 0.5;

bool NicFullOfTheJobsExchanges(const DetectorInput& in, const JobTraffic& job,
                               const std::string& node,
                               const NetworkSettings& s) {
  auto link = in.recent.nodes.find(node);
  if (link == in.recent.nodes.end()) return false;
  auto nic = NodeLinkUtilization(link->second);
  if (!nic || nic->ratio < s.exit_ratio) return false;
  double job_ps = 0;
  for (const PsTraffic& ps : job.ps_traffic) {
    auto it = in.recent.pods.find(ps.key);
    if (it == in.recent.pods.end() || it->second.meta.node != node) continue;
    job_ps +=
        OnLinkRate(in.recent, it->second, nic->receive, nic->bytes_per_second);
  }
  return job_ps >= kJobShareOfAFullNic * nic->bytes_per_second;
}

// Whether the compared exchanges are shares of one full link, so that a
// smaller one is the link's arbitration (TCP flows on a full link take turns
// for many seconds), which network_saturated names: a PS's own link (every
// worker exchanges with every PS each step), or the NIC of a PS's node, full
// of the job's exchanges, which the worker's exchange with that PS crosses
// when it runs on another node (seen from the PS' side, or in the cluster
// view from the workers'). `worker` is null for a worker seen only from
// this node's PS, which runs elsewhere.
bool ExchangesShareAFullLink(const DetectorInput& in, const JobTraffic& job,
                             const PodStats* worker, const NetworkSettings& s) {
  for (const PsTraffic& ps : job.ps_traffic) {
    auto it = in.recent.pods.find(ps.key);
    if (it == in.recent.pods.end()) continue;
    const PodStats& pod = it->second;
    for (bool receive : {true, false}) {
      auto use = LinkUtilization(pod, receive);
      if (use && use->ratio >= s.exit_ratio) return true;
    }
    if (worker && worker->meta.node == pod.meta.node) continue;
    if (NicFullOfTheJobsExchanges(in, job, pod.meta.node, s)) return true;
  }
  return false;
}

}  // namespace

void DetectStragglerWorker(const DetectorInput& in, const StragglerSettings& s,
                           const DiagnosisSettings& all,
                           std::vector<Finding>& out) {
  // Rates over the longer window; the likely causes over the recent one,
  // since those detectors judge the same window.
  for (const auto& job : in.sustained_jobs) {
    auto workers = ComparableWorkers(in, job);
    // Similar rates leave the byte rule nothing to find: judge causes.
    if (LooksSynchronous(workers, s, all.sync_ps)) {
      DetectByCause(in, job, workers, s, all, out);
    }
    // Too few local workers to compare, but a local PS serves more: compare
    // every worker by its exchange with that PS (cross-node stragglers).
    bool from_ps_side = false;
    if (workers.size() < s.min_workers &&
        job.ps_side_worker_exchange.size() >= s.min_workers) {
      workers = job.ps_side_worker_exchange;
      from_ps_side = true;
    }
    if (workers.size() < s.min_workers) continue;
    for (const auto& [key, rate] : workers) {
      std::vector<double> others;
      for (const auto& [other, r] : workers) {
        if (other != key) others.push_back(r);
      }
      const double median = Median(others);
      if (median < s.min_median_bytes_per_second) continue;
      const double ratio = rate / median;
      if (ratio >= s.exit_ratio) continue;
      auto it = in.recent.pods.find(key);
      const bool local = it != in.recent.pods.end();
      // A remote worker (PS side) has no local samples: no causes to show.
      if (!local && !from_ps_side) continue;
      if (local && StoppedInWindow(in, it->second, s, all)) continue;
      PodStats remote;
      if (!local) remote.meta = RemoteWorkerMeta(key, job);
      const PodStats& pod = local ? it->second : remote;
      auto causes = LikelyCauses(pod, all);
      // On a full shared link only a cause of its own makes it a straggler.
      if (causes.empty() && ExchangesShareAFullLink(
                                in, job, local ? &pod : nullptr, all.network)) {
        continue;
      }
      Finding f;
      f.level = ratio < s.enter_ratio ? Finding::Level::kEnter
                                      : Finding::Level::kHold;
      f.diagnosis =
          NewDiagnosis(kStragglerWorker, Severity::kWarning, pod.meta);
      f.diagnosis.evidence = {
          {"ps_exchange_bytes_per_second", Round4(rate)},
          {"peer_median_bytes_per_second", Round4(median)},
          {"ratio_to_median", Round4(ratio)},
          {"workers", workers.size()},
          {"measured_from", from_ps_side ? "ps" : "workers"},
          {"likely_causes", causes}};
      SetStragglerImpact(in, key, pod.meta, ratio, workers.size(), f.diagnosis);
      f.diagnosis.summary = fmt::format(
          "Worker {} exchanges {:.0f}% of the median of job {}'s other "
          "workers with the PS{}{}.",
          pod.meta.pod, ratio * 100, job.training_job,
          from_ps_side ? " (seen from this node's PS)" : "",
          causes.empty()
              ? ""
              : fmt::format(" (likely cause: {})", fmt::join(causes, ", ")));
      for (const auto& cause : causes) {
        f.diagnosis.recommendations.push_back(CauseAdvice(cause, pod.meta.pod));
      }
      f.diagnosis.recommendations.push_back(fmt::format(
          "Compare {}'s node with its peers' (other tenants, CPU model, NIC); "
          "if it stays slow, reschedule it (delete the pod) or, for "
          "synchronous training, use backup workers "
          "(SyncReplicasOptimizer(replicas_to_aggregate < total_num_replicas))"
          ".",
          pod.meta.pod));
      out.push_back(std::move(f));
    }
  }
}

}  // namespace trainscope::diagnosis
