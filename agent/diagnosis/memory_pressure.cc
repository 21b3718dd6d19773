// memory_pressure: a pod near its memory limit reclaims page cache and
// stalls (PSI) before the OOM killer ends it; a killed PS restarts the job.
#include <fmt/format.h>

#include "diagnosis/detectors.h"
#include "diagnosis/impact.h"

namespace trainscope::diagnosis {

void DetectMemoryPressure(const DetectorInput& in, const MemorySettings& s,
                          std::vector<Finding>& out) {
  for (const auto& [key, pod] : in.recent.pods) {
    std::optional<double> ratio;
    if (pod.memory_working_set_bytes && pod.memory_limit_bytes &&
        *pod.memory_limit_bytes > 0) {
      ratio = *pod.memory_working_set_bytes / *pod.memory_limit_bytes;
    }
    const std::optional<double> psi = pod.memory_pressure_ratio;
    const bool killed = pod.oom_kills && *pod.oom_kills > 0;
    const bool enter = killed || (ratio && *ratio >= s.enter_ratio) ||
                       (psi && *psi >= s.psi_enter);
    const bool hold = enter || (ratio && *ratio >= s.exit_ratio) ||
                      (psi && *psi >= s.psi_exit);
    if (!hold) continue;
    Finding f;
    f.level = enter ? Finding::Level::kEnter : Finding::Level::kHold;
    const bool critical = killed || (ratio && *ratio >= s.critical_ratio);
    f.diagnosis = NewDiagnosis(kMemoryPressure, Severity::kWarning, pod.meta);
    auto& ev = f.diagnosis.evidence;
    if (pod.memory_working_set_bytes) {
      ev["working_set_bytes"] = Round4(*pod.memory_working_set_bytes);
    }
    if (pod.memory_limit_bytes) {
      ev["memory_limit_bytes"] = Round4(*pod.memory_limit_bytes);
    }
    if (ratio) ev["working_set_ratio"] = Round4(*ratio);
    if (psi) ev["memory_stall_ratio"] = Round4(*psi);
    if (pod.oom_kills) ev["oom_kills"] = *pod.oom_kills;
    // What it costs now is the memory stall; what it risks is an OOM kill
    // (a killed PS restarts the job), so near the limit it is never info.
    const bool near_limit = ratio && *ratio >= s.enter_ratio;
    std::string model = "memory_pressure";
    const double cost = JobCostOfPod(in.recent, key, psi.value_or(0), model);
    SetImpact(f.diagnosis, cost, model,
              critical     ? Severity::kCritical
              : near_limit ? Severity::kWarning
                           : Severity::kInfo);
    std::string what;
    if (killed) {
      what = fmt::format("had {:g} process(es) OOM-killed", *pod.oom_kills);
    } else if (ratio && *ratio >= s.exit_ratio) {
      what = fmt::format("uses {:.0f}% of its memory limit", *ratio * 100);
    } else {
      what = fmt::format("stalled on memory {:.0f}% of the time", *psi * 100);
    }
    f.diagnosis.summary = fmt::format("{} {}.", pod.meta.pod, what);
    f.diagnosis.recommendations = {
        fmt::format("Raise the memory limit of {} (resources.limits.memory) "
                    "above its peak working set with headroom.",
                    pod.meta.pod),
        pod.meta.role == Role::kPs
            ? "Partition large variables over more PS so no single PS holds "
              "them all (each PS then needs less memory)."
            : "Shrink the input pipeline's buffers (tf.data shuffle/prefetch "
              "buffer sizes, interleave cycle_length) or the batch size."};
    out.push_back(std::move(f));
  }
}

}  // namespace trainscope::diagnosis
