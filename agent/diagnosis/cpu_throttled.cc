// cpu_throttled: CFS throttling stalls a pod at every period boundary even
// when its average usage looks fine; gRPC latency suffers first.
#include <fmt/format.h>

#include "diagnosis/detectors.h"
#include "diagnosis/impact.h"

namespace trainscope::diagnosis {
namespace {

// The pod's step stalls for the share of its time it waits for CPU (PSI
// some, which counts throttled time; else the throttled share of its
// periods, an upper bound). A throttled PS stalls its workers for that share
// of the time they wait on it (WorkerWaitShare), or by the part of that
// wait beyond what the job's other PS make them wait per byte (PsCpuGain).
void SetThrottleImpact(const DetectorInput& in, const std::string& key,
                       const PodStats& pod, double throttled_ratio,
                       Diagnosis& d) {
  const auto pressure = StallShare(pod, "cpu");
  const double stall = pressure.value_or(std::min(1.0, throttled_ratio));
  std::string model = pressure ? "cpu_pressure" : "throttled_ratio_upper_bound";
  if (pressure) d.evidence["cpu_pressure_ratio"] = Round4(*pressure);
  if (pod.meta.role == Role::kPs) {
    if (auto wait =
            WorkerWaitShare(in.recent, pod.meta, key, PsLinkBusyRatio(pod))) {
      const std::string busy = NoteWorkerWait(*wait, d.evidence);
      const CpuGain gain = PsCpuGain(in.recent, pod.meta, key, stall);
      if (gain.pace_ratio)
        d.evidence["wait_pace_ratio"] = Round4(*gain.pace_ratio);
      SetImpact(d, wait->share * gain.factor,
                busy + "_x_" + (gain.from_pace ? "wait_pace_gap" : model));
      return;
    }
  }
  const double cost = JobCostOfPod(in.recent, key, stall, model);
  SetImpact(d, cost, model);
}

}  // namespace

void DetectCpuThrottled(const DetectorInput& in, const ThrottleSettings& s,
                        std::vector<Finding>& out) {
  for (const auto& [key, pod] : in.recent.pods) {
    if (!pod.throttled_ratio || !pod.cpu_periods) continue;
    if (*pod.cpu_periods < s.min_periods) continue;
    const double ratio = *pod.throttled_ratio;
    if (ratio < s.exit_ratio) continue;
    Finding f;
    f.level =
        ratio >= s.enter_ratio ? Finding::Level::kEnter : Finding::Level::kHold;
    f.diagnosis = NewDiagnosis(kCpuThrottled, Severity::kWarning, pod.meta);
    f.diagnosis.evidence = {{"throttled_ratio", Round4(ratio)},
                            {"periods", Round4(*pod.cpu_periods)}};
    SetThrottleImpact(in, key, pod, ratio, f.diagnosis);
    if (pod.cpu_cores)
      f.diagnosis.evidence["cpu_cores"] = Round4(*pod.cpu_cores);
    if (pod.cpu_limit_cores) {
      f.diagnosis.evidence["cpu_limit_cores"] = Round4(*pod.cpu_limit_cores);
    }
    f.diagnosis.summary = fmt::format(
        "{} was throttled in {:.0f}% of its CFS periods{}.", pod.meta.pod,
        ratio * 100,
        pod.cpu_limit_cores
            ? fmt::format(" by its {:g}-core CPU limit", *pod.cpu_limit_cores)
            : "");
    f.diagnosis.recommendations = {
        fmt::format("Raise the CPU limit of {} (resources.limits.cpu) to at "
                    "least its peak usage, or drop the limit and keep the "
                    "request.",
                    pod.meta.pod),
        "Match TensorFlow's thread pools to the limit "
        "(tf.config.threading.set_inter_op_parallelism_threads / "
        "set_intra_op_parallelism_threads), so bursts do not exhaust the "
        "quota early in each period."};
    out.push_back(std::move(f));
  }
}

}  // namespace trainscope::diagnosis
