#include "diagnosis/detectors.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <exception>
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

namespace {

// The registry: every detector in catalog order, with the settings it reads.
// Adding a detector is its file plus one entry here.
constexpr DetectorEntry kDetectors[] = {
    {kHotParameterServer, DetectorScope::kWholeJob,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectHotParameterServer(in, s.hot_ps, s.headroom, out);
     }},
    {kPsCpuSaturated, DetectorScope::kPodOrNode,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectPsCpuSaturated(in, s.ps_cpu, s.headroom, out);
     }},
    {kStragglerWorker, DetectorScope::kWholeJob,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectStragglerWorker(in, s.straggler, s, out);
     }},
    {kCpuThrottled, DetectorScope::kPodOrNode,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectCpuThrottled(in, s.throttle, out);
     }},
    {kNetworkSaturated, DetectorScope::kPodOrNode,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectNetworkSaturated(in, s.network, out);
     }},
    {kMemoryPressure, DetectorScope::kPodOrNode,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectMemoryPressure(in, s.memory, out);
     }},
    {kInputIoBound, DetectorScope::kWholeJob,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectInputIoBound(in, s.input_io, out);
     }},
    {kGpuUnderutilized, DetectorScope::kPodOrNode,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectGpuUnderutilized(in, s.gpu, out);
     }},
    {kAllreduceStraggler, DetectorScope::kWholeJob,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectAllreduceStraggler(in, s, out);
     }},
    {kAllreduceSlowLink, DetectorScope::kWholeJob,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectAllreduceSlowLink(in, s.allreduce_link, out);
     }},
    {kPodRestarting, DetectorScope::kPodOrNode,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectPodRestarting(in, s.restart, out);
     }},
    {kTrainingStalled, DetectorScope::kWholeJob,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectTrainingStalled(in, s.stall, out);
     }},
    {kGpuError, DetectorScope::kPodOrNode,
     [](const DetectorInput& in, const DiagnosisSettings& s, auto& out) {
       DetectGpuError(in, s.gpu_error, out);
     }},
};

}  // namespace

std::span<const DetectorEntry> Detectors() { return kDetectors; }

bool JudgesWholeJob(std::string_view kind) {
  for (const DetectorEntry& d : kDetectors) {
    if (d.kind == kind) return d.scope == DetectorScope::kWholeJob;
  }
  return false;
}

std::vector<Finding> RunDetectors(const DetectorInput& in,
                                  const DiagnosisSettings& settings) {
  std::vector<Finding> out;
  for (const DetectorEntry& detector : kDetectors) {
    std::vector<Finding> found;
    try {
      detector.detect(in, settings, found);
    } catch (const std::exception& e) {
      // One broken detector must not silence the others.
      spdlog::error("[diagnosis] detector {} failed over {} pods: {}",
                    detector.kind, in.recent.pods.size(), e.what());
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

std::optional<NodeLinkUse> NodeLinkUtilization(const NodeStats& link) {
  const double speed = link.nic_speed_bytes_per_second.value_or(0);
  if (speed <= 0) return std::nullopt;
  std::optional<NodeLinkUse> fuller;
  for (bool rx : {true, false}) {
    const auto& rate =
        rx ? link.receive_bytes_per_second : link.transmit_bytes_per_second;
    if (rate && (!fuller || *rate > fuller->bytes_per_second))
      fuller = NodeLinkUse{*rate / speed, *rate, speed, rx};
  }
  return fuller;
}

double OnLinkRate(const WindowStats& stats, const PodStats& pod, bool receive,
                  double node_rate) {
  if (!pod.peer_rates.empty()) {
    double remote = 0;
    for (const auto& [peer, rate] : pod.peer_rates) {
      auto it = stats.pods.find(peer);
      if (it != stats.pods.end() && it->second.meta.node == pod.meta.node) {
        continue;  // same node: never crosses the link
      }
      remote += receive ? rate.receive_bytes : rate.transmit_bytes;
    }
    return std::min(remote, node_rate);
  }
  const auto& own =
      receive ? pod.receive_bytes_per_second : pod.transmit_bytes_per_second;
  return std::min(own.value_or(0), node_rate);
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
