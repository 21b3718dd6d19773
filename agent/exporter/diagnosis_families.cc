#include "exporter/diagnosis_families.h"

#include <string>

#include "kube/quantity.h"
#include "trainscope/metric_names.h"

namespace trainscope {

void AppendDiagnosisFamilies(const ExportContext& ctx,
                             const std::vector<diagnosis::Diagnosis>& active,
                             std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder diagnoses(
      std::string(kDiagnosisActive),
      "1 while the diagnosis (kind, severity) is active for the pod (or, "
      "with pod=\"\", for the node); the series disappears when it clears. "
      "Details: /api/v1/report.",
      prometheus::MetricType::Gauge);
  for (const auto& d : active) {
    diagnoses.Add(
        {{"kind", d.kind},
         {"severity", std::string(diagnosis::SeverityName(d.severity))},
         {"namespace", d.namespace_name},
         {"training_job", d.training_job},
         {"pod", d.pod},
         {"node", d.node}},
        1.0);
  }
  diagnoses.MoveInto(out);

  FamilyBuilder limits(
      std::string(kPodBandwidthLimitBytesPerSecond),
      "Shaped bandwidth of the pod from its kubernetes.io/ingress-bandwidth "
      "(direction=receive) and egress-bandwidth (direction=transmit) "
      "annotations, in bytes/s; absent when not annotated.",
      prometheus::MetricType::Gauge);
  if (const auto& pods = ctx.snapshot().pods) {
    for (const auto& pod : *pods) {
      if (!ctx.Exports(pod)) continue;
      const std::pair<std::string_view, const char*> annotations[] = {
          {kIngressBandwidthAnnotation, "receive"},
          {kEgressBandwidthAnnotation, "transmit"}};
      for (const auto& [key, direction] : annotations) {
        auto it = pod.annotations.find(std::string(key));
        if (it == pod.annotations.end()) continue;
        limits.Add(WithLabels(ctx.PodLabels(pod), {{"direction", direction}}),
                   ParseBandwidthAnnotation(it->second));
      }
    }
  }
  limits.MoveInto(out);
}

}  // namespace trainscope
