// input_io_bound: workers starved by slow shared storage (HDFS, CephFS)
// stall on reads and so pull less from the PS; adding PS or workers does not
// help, the input pipeline does.
#include <fmt/format.h>

#include <algorithm>

#include "diagnosis/detectors.h"
#include "diagnosis/impact.h"
#include "diagnosis/training_speed.h"

namespace trainscope::diagnosis {
namespace {

bool IsWorkerRole(Role r) {
  return r == Role::kWorker || r == Role::kChief || r == Role::kMaster;
}

// The worker's step slows by its step rate against its peers' (else by its
// exchange against the expected one): what a faster input pipeline gives
// back.
void SetInputImpact(const DetectorInput& in, const std::string& key,
                    const PodStats& pod, double exchange_ratio, Diagnosis& d) {
  const auto peers = PeerMedianSteps(in.recent, pod.meta, key);
  if (pod.steps_per_second && peers && *peers > 0) {
    d.evidence["steps_per_second"] = Round4(*pod.steps_per_second);
    d.evidence["peer_steps_per_second"] = Round4(*peers);
    std::string model = "step_rate_drop";
    const double own = 1 - std::min(1.0, *pod.steps_per_second / *peers);
    // The cost first: JobCostOfPod renames the model.
    const double cost = JobCostOfPod(in.recent, key, own, model);
    SetImpact(d, cost, model);
    return;
  }
  SetImpact(d, 1 - std::min(1.0, exchange_ratio), "exchange_drop");
}

}  // namespace

void DetectInputIoBound(const DetectorInput& in, const InputIoSettings& s,
                        std::vector<Finding>& out) {
  for (const auto& job : in.jobs) {
    for (const auto& [key, exchange] : job.worker_exchange) {
      auto it = in.recent.pods.find(key);
      if (it == in.recent.pods.end()) continue;
      const PodStats& pod = it->second;
      if (!IsWorkerRole(pod.meta.role) || !pod.io_pressure_ratio) continue;
      const double psi = *pod.io_pressure_ratio;
      if (psi < s.psi_exit) continue;
      // What the worker should be exchanging: its peers' median, or its own
      // rate over the longer history, whichever is higher.
      std::vector<double> others;
      for (const auto& [other, r] : job.worker_exchange) {
        if (other != key) others.push_back(r);
      }
      const double peers = others.size() >= 2 ? Median(others) : 0;
      const double own = WorkerPsExchange(in.baseline.get(), key).value_or(0);
      const double expected = std::max(peers, own);
      if (expected <= 0 || exchange >= s.drop_ratio * expected) continue;
      Finding f;
      f.level =
          psi >= s.psi_enter ? Finding::Level::kEnter : Finding::Level::kHold;
      f.diagnosis = NewDiagnosis(kInputIoBound, Severity::kWarning, pod.meta);
      f.diagnosis.evidence = {
          {"io_stall_ratio", Round4(psi)},
          {"ps_exchange_bytes_per_second", Round4(exchange)},
          {"expected_ps_exchange_bytes_per_second", Round4(expected)},
          {"exchange_ratio", Round4(exchange / expected)}};
      if (pod.io_read_bytes_per_second) {
        f.diagnosis.evidence["io_read_bytes_per_second"] =
            Round4(*pod.io_read_bytes_per_second);
      }
      SetInputImpact(in, key, pod, exchange / expected, f.diagnosis);
      f.diagnosis.summary = fmt::format(
          "Worker {} stalls on IO {:.0f}% of the time while its PS exchange "
          "fell to {:.0f}% of the expected rate: the input pipeline starves "
          "training.",
          pod.meta.pod, psi * 100, exchange / expected * 100);
      f.diagnosis.recommendations = {
          "Overlap input with compute: tf.data "
          ".interleave(num_parallel_calls=tf.data.AUTOTUNE) and "
          ".prefetch(tf.data.AUTOTUNE); .cache() data that is read every "
          "epoch.",
          "Stage the training data on local disk or a faster store instead "
          "of reading it from shared storage (HDFS, CephFS) during training.",
          "Adding PS or workers will not help while the input is the "
          "bottleneck."};
      out.push_back(std::move(f));
    }
  }
}

}  // namespace trainscope::diagnosis
