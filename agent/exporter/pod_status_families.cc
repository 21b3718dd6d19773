#include "exporter/pod_status_families.h"

#include <string>

#include "trainscope/metric_names.h"

namespace trainscope {

using prometheus::MetricType;

void AppendPodStatusFamilies(const ExportContext& ctx,
                             std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder pod_restarts(
      std::string(kPodRestartsTotal),
      "Restarts of the pod's containers by the kubelet (restartCount), "
      "summed. Per pod.",
      MetricType::Counter);
  FamilyBuilder container_restarts(
      std::string(kContainerRestartsTotal),
      "Restarts of the container by the kubelet (restartCount). Per "
      "container.",
      MetricType::Counter);
  FamilyBuilder terminated(
      std::string(kContainerLastTerminatedTimestampSeconds),
      "When the container's previous run ended (lastState.terminated."
      "finishedAt), Unix seconds; labelled with its reason, exit code and "
      "signal. Per container.",
      MetricType::Gauge);
  FamilyBuilder started(
      std::string(kContainerStartedTimestampSeconds),
      "When the running container started (state.running.startedAt), Unix "
      "seconds. Per container.",
      MetricType::Gauge);
  FamilyBuilder waiting(std::string(kContainerWaiting),
                        "1 while the container waits to run, labelled with "
                        "the kubelet's reason (CrashLoopBackOff, ...). Per "
                        "container.",
                        MetricType::Gauge);
  const Snapshot& snapshot = ctx.snapshot();
  if (snapshot.pods) {
    for (const auto& pod : *snapshot.pods) {
      if (!ctx.Exports(pod)) continue;
      const LabelMap labels = ctx.PodLabels(pod);
      std::optional<double> sum;
      for (const auto& c : pod.containers) {
        const LabelMap own = WithLabels(labels, {{"container", c.name}});
        if (c.restart_count) {
          container_restarts.Add(own, *c.restart_count);
          sum = sum.value_or(0) + *c.restart_count;
        }
        if (c.last_terminated && c.last_terminated->finished_at_s) {
          const ContainerTermination& t = *c.last_terminated;
          terminated.Add(
              WithLabels(own, {{"reason", t.reason},
                               {"exit_code", std::to_string(t.exit_code)},
                               {"signal", std::to_string(t.signal)}}),
              t.finished_at_s);
        }
        started.Add(own, c.running_since_s);
        if (!c.waiting_reason.empty()) {
          waiting.Add(WithLabels(own, {{"reason", c.waiting_reason}}), 1.0);
        }
      }
      pod_restarts.Add(labels, sum);
    }
  }
  pod_restarts.MoveInto(out);
  container_restarts.MoveInto(out);
  terminated.MoveInto(out);
  started.MoveInto(out);
  waiting.MoveInto(out);
}

}  // namespace trainscope
