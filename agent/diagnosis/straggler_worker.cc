// straggler_worker: in synchronous and asynchronous PS training alike, a
// worker that exchanges much less with the PS than its peers makes fewer
// steps; with sync replicas everybody waits for it.
#include <fmt/format.h>

#include "diagnosis/detectors.h"

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

}  // namespace

void DetectStragglerWorker(const DetectorInput& in, const StragglerSettings& s,
                           const DiagnosisSettings& all,
                           std::vector<Finding>& out) {
  // Rates over the longer window; the likely causes over the recent one,
  // since those detectors judge the same window.
  for (const auto& job : in.sustained_jobs) {
    if (job.worker_exchange.size() < s.min_workers) continue;
    for (const auto& [key, rate] : job.worker_exchange) {
      std::vector<double> others;
      for (const auto& [other, r] : job.worker_exchange) {
        if (other != key) others.push_back(r);
      }
      const double median = Median(others);
      if (median < s.min_median_bytes_per_second) continue;
      const double ratio = rate / median;
      if (ratio >= s.exit_ratio) continue;
      auto it = in.recent.pods.find(key);
      if (it == in.recent.pods.end()) continue;
      const PodStats& pod = it->second;
      Finding f;
      f.level = ratio < s.enter_ratio ? Finding::Level::kEnter
                                      : Finding::Level::kHold;
      f.diagnosis =
          NewDiagnosis(kStragglerWorker, Severity::kWarning, pod.meta);
      auto causes = LikelyCauses(pod, all);
      f.diagnosis.evidence = {{"ps_exchange_bytes_per_second", Round4(rate)},
                              {"peer_median_bytes_per_second", Round4(median)},
                              {"ratio_to_median", Round4(ratio)},
                              {"workers", job.worker_exchange.size()},
                              {"likely_causes", causes}};
      f.diagnosis.summary = fmt::format(
          "Worker {} exchanges {:.0f}% of the median of job {}'s other "
          "workers with the PS{}.",
          pod.meta.pod, ratio * 100, job.training_job,
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
