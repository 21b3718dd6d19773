// parameter_server_cpu_saturated: a PS that uses (nearly) all the CPU it may
// use serves every worker late; the whole job waits on it.
#include <fmt/format.h>

#include "diagnosis/detectors.h"
#include "diagnosis/impact.h"

namespace trainscope::diagnosis {
namespace {

// The workers wait on this PS for a share of their time (WorkerWaitShare:
// their exchange bursts with it, or from their requests to its answers,
// which a PS throttled in every CFS period sends in pieces up to a period
// apart); of that, the PS' CPU stall (PSI some, else the throttled share of
// its periods) stands for what more CPU gives back, where no other PS of the
// job shows what the workers wait per byte on a PS with CPU to spare
// (PsCpuGain).
void SetPsCpuImpact(const DetectorInput& in, const std::string& key,
                    const PodStats& pod, Diagnosis& d) {
  std::optional<double> stall = StallShare(pod, "cpu");
  std::string stall_name = "cpu_pressure";
  if (!stall && pod.throttled_ratio) {
    stall = std::min(1.0, *pod.throttled_ratio);
    stall_name = "throttled_ratio";
  }
  const auto wait =
      WorkerWaitShare(in.recent, pod.meta, key, PsLinkBusyRatio(pod));
  std::optional<double> busy;
  std::string busy_name = "worker_exchange_share";
  if (wait) {
    busy = wait->share;
    busy_name = NoteWorkerWait(*wait, d.evidence);
  }
  if (stall) d.evidence["cpu_stall_ratio"] = Round4(*stall);
  const std::string bound =
      stall_name == "throttled_ratio" ? std::string(kUpperBoundSuffix) : "";
  if (busy && stall) {
    const CpuGain gain = PsCpuGain(in.recent, pod.meta, key, *stall);
    if (gain.pace_ratio)
      d.evidence["wait_pace_ratio"] = Round4(*gain.pace_ratio);
    SetImpact(d, *busy * gain.factor,
              busy_name + "_x_" +
                  (gain.from_pace ? "wait_pace_gap" : stall_name + bound));
  } else if (stall) {
    SetImpact(d, *stall, stall_name + "_upper_bound");
  } else {
    SetImpact(d, busy.value_or(0), busy_name + "_upper_bound");
  }
}

}  // namespace

void DetectPsCpuSaturated(const DetectorInput& in, const PsCpuSettings& s,
                          const HeadroomSettings& headroom,
                          std::vector<Finding>& out) {
  for (const auto& [key, pod] : in.recent.pods) {
    if (pod.meta.role != Role::kPs || !pod.cpu_cores) continue;
    std::optional<double> capacity = pod.cpu_limit_cores;
    const bool limited = capacity.has_value();
    if (!capacity) capacity = pod.node_cpu_count;
    if (!capacity || *capacity <= 0) continue;
    const double ratio = *pod.cpu_cores / *capacity;
    if (ratio < s.exit_ratio) continue;
    Finding f;
    f.level =
        ratio >= s.enter_ratio ? Finding::Level::kEnter : Finding::Level::kHold;
    f.diagnosis = NewDiagnosis(kPsCpuSaturated, Severity::kCritical, pod.meta);
    f.diagnosis.evidence = {
        {"cpu_cores", Round4(*pod.cpu_cores)},
        {limited ? "cpu_limit_cores" : "node_cpu_count", Round4(*capacity)},
        {"utilization_ratio", Round4(ratio)}};
    if (pod.throttled_ratio) {
      f.diagnosis.evidence["throttled_ratio"] = Round4(*pod.throttled_ratio);
    }
    SetPsCpuImpact(in, key, pod, f.diagnosis);
    f.diagnosis.summary = fmt::format(
        "Parameter server {} uses {:.0f}% of its {} ({:.2f} of {:g} cores); "
        "every worker waits on it.",
        pod.meta.pod, ratio * 100, limited ? "CPU limit" : "node's cores",
        *pod.cpu_cores, *capacity);
    NoteHeadroom(in.headroom, headroom, f.diagnosis);
    f.diagnosis.recommendations = {
        limited ? fmt::format("Raise the CPU limit of {} (resources.limits.cpu,"
                              " now {:g}) or remove it for PS pods.",
                              pod.meta.pod, *capacity)
                : fmt::format("Give {} a node with more free cores, or keep "
                              "other busy pods off its node.",
                              pod.meta.pod),
        "Add parameter servers and partition the variables over them, so the "
        "update work is shared (fixed_size_partitioner / MinSizePartitioner "
        "with max_shards = number of PS).",
        "If this PS is also reported as hot_parameter_server, partitioning "
        "fixes both; more CPU alone only moves the limit."};
    out.push_back(std::move(f));
  }
}

}  // namespace trainscope::diagnosis
