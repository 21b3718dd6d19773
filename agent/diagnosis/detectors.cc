#include "diagnosis/detectors.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <utility>

namespace trainscope::diagnosis {

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "warning";
}

std::vector<Finding> RunDetectors(const DetectorInput& in,
                                  const DiagnosisSettings& settings) {
  // The registry: adding a detector is its file plus one line here.
  const std::pair<std::string_view, std::function<void(std::vector<Finding>&)>>
      detectors[] = {
          {kHotParameterServer,
           [&](auto& out) {
             DetectHotParameterServer(in, settings.hot_ps, out);
           }},
          {kPsCpuSaturated,
           [&](auto& out) { DetectPsCpuSaturated(in, settings.ps_cpu, out); }},
          {kStragglerWorker,
           [&](auto& out) {
             DetectStragglerWorker(in, settings.straggler, settings, out);
           }},
          {kCpuThrottled,
           [&](auto& out) { DetectCpuThrottled(in, settings.throttle, out); }},
          {kNetworkSaturated,
           [&](auto& out) {
             DetectNetworkSaturated(in, settings.network, out);
           }},
          {kMemoryPressure,
           [&](auto& out) { DetectMemoryPressure(in, settings.memory, out); }},
          {kInputIoBound,
           [&](auto& out) { DetectInputIoBound(in, settings.input_io, out); }},
          {kGpuUnderutilized,
           [&](auto& out) { DetectGpuUnderutilized(in, settings.gpu, out); }},
          {kAllreduceStraggler,
           [&](auto& out) { DetectAllreduceStraggler(in, settings, out); }},
          {kAllreduceSlowLink,
           [&](auto& out) {
             DetectAllreduceSlowLink(in, settings.allreduce_link, out);
           }},
      };
  std::vector<Finding> out;
  for (const auto& [kind, detect] : detectors) {
    std::vector<Finding> found;
    try {
      detect(found);
    } catch (const std::exception& e) {
      // One broken detector must not silence the others.
      spdlog::error("[diagnosis] detector {} failed over {} pods: {}", kind,
                    in.recent.pods.size(), e.what());
      continue;
    }
    for (auto& f : found) out.push_back(std::move(f));
  }
  return out;
}

Diagnosis NewDiagnosis(std::string_view kind, Severity severity,
                       const PodMeta& meta) {
  Diagnosis d;
  d.kind = std::string(kind);
  d.severity = severity;
  d.namespace_name = meta.namespace_name;
  d.training_job = meta.training_job;
  d.pod = meta.pod;
  d.node = meta.node;
  return d;
}

std::optional<LinkUse> LinkUtilization(const PodStats& pod, bool receive) {
  const auto& rate =
      receive ? pod.receive_bytes_per_second : pod.transmit_bytes_per_second;
  if (!rate) return std::nullopt;
  std::optional<LinkUse> best;
  const auto& limit = receive ? pod.meta.ingress_limit_bytes_per_second
                              : pod.meta.egress_limit_bytes_per_second;
  if (limit && *limit > 0) {
    best = LinkUse{*rate / *limit, *rate, *limit, true};
  }
  const auto& node_rate = receive ? pod.node_receive_bytes_per_second
                                  : pod.node_transmit_bytes_per_second;
  const auto& speed = pod.node_nic_speed_bytes_per_second;
  if (speed && *speed > 0 && node_rate) {
    const double on_link = std::min(*rate, *node_rate);
    if (!best || on_link / *speed > best->ratio) {
      best = LinkUse{on_link / *speed, on_link, *speed, false};
    }
  }
  return best;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

double Round4(double v) {
  if (v == 0 || !std::isfinite(v)) return v;
  double scale = std::pow(10, 3 - std::floor(std::log10(std::fabs(v))));
  return std::round(v * scale) / scale;
}

}  // namespace trainscope::diagnosis
