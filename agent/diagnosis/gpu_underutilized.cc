// gpu_underutilized: GPUs are the expensive part of a training node; a pod
// that holds them while its processes keep them idle waits on something else
// (input, PS, CPU preprocessing).
#include <fmt/format.h>

#include "diagnosis/detectors.h"
#include "diagnosis/impact.h"

namespace trainscope::diagnosis {

void DetectGpuUnderutilized(const DetectorInput& in, const GpuSettings& s,
                            std::vector<Finding>& out) {
  for (const auto& [key, pod] : in.recent.pods) {
    if (pod.gpus == 0 || !pod.gpu_utilization_ratio) continue;
    // A pod that does nothing at all (finished, waiting to start) is not
    // wasting its GPUs in a way this detector can name; one that trains
    // (steps, exchanges with its peers) is, however little CPU it uses while
    // it waits on its PS.
    const auto exchange = PodExchangeShare(in.recent, key);
    const bool trains = pod.steps_per_second.has_value() ||
                        (exchange && *exchange >= s.active_exchange_share);
    const bool computes = pod.cpu_cores && *pod.cpu_cores >= s.active_cpu_cores;
    if (!trains && !computes) continue;
    const double util = *pod.gpu_utilization_ratio;
    if (util >= s.exit_utilization) continue;
    Finding f;
    f.level = util < s.enter_utilization ? Finding::Level::kEnter
                                         : Finding::Level::kHold;
    f.diagnosis = NewDiagnosis(kGpuUnderutilized, Severity::kWarning, pod.meta);
    f.diagnosis.evidence = {{"gpu_utilization_ratio", Round4(util)},
                            {"gpus", pod.gpus}};
    if (pod.cpu_cores)
      f.diagnosis.evidence["cpu_cores"] = Round4(*pod.cpu_cores);
    if (pod.steps_per_second)
      f.diagnosis.evidence["steps_per_second"] = Round4(*pod.steps_per_second);
    if (exchange) f.diagnosis.evidence["exchange_share"] = Round4(*exchange);
    // The step could be this much shorter if the GPU never waited: a bound,
    // since what it waits on (input, PS, CPU) sets how much a fix gives.
    std::string model = "gpu_idle_share_upper_bound";
    // The cost first: JobCostOfPod renames the model.
    const double cost = JobCostOfPod(in.recent, key, 1 - util, model);
    // Idle GPUs are paid for whatever the job's speed (a worker that keeps
    // its peers' pace costs the job no steps, yet holds them): at least a
    // warning.
    f.diagnosis.evidence["idle_gpus"] = Round4(pod.gpus * (1 - util));
    SetImpact(f.diagnosis, cost, model, Severity::kWarning);
    f.diagnosis.summary =
        trains && !computes
            ? fmt::format(
                  "{} keeps its {} GPU(s) {:.0f}% busy while it trains "
                  "({}): the GPUs wait on its peers.",
                  pod.meta.pod, pod.gpus, util * 100,
                  pod.steps_per_second
                      ? fmt::format("{:.2f} steps/s", *pod.steps_per_second)
                      : fmt::format("exchanging {:.0f}% of the time",
                                    exchange.value_or(0) * 100))
            : fmt::format(
                  "{} keeps its {} GPU(s) {:.0f}% busy while its CPU works "
                  "({:.2f} cores): the GPUs wait on input or communication.",
                  pod.meta.pod, pod.gpus, util * 100,
                  pod.cpu_cores.value_or(0));
    f.diagnosis.recommendations = {
        "Move preprocessing off the critical path: tf.data map(..., "
        "num_parallel_calls=tf.data.AUTOTUNE), prefetch to the device "
        "(tf.data.experimental.prefetch_to_device), or preprocess offline.",
        "Raise the per-GPU batch size (or use mixed precision) so each step "
        "keeps the GPU busy longer.",
        "If a hot_parameter_server or network_saturated diagnosis is active "
        "for the same job, fix that first: the GPU waits on the PS.",
        "If the job cannot use the GPU, request fewer GPUs "
        "(resources.limits nvidia.com/gpu)."};
    out.push_back(std::move(f));
  }
}

}  // namespace trainscope::diagnosis
