// network_saturated: gradients and variables saturate a 1 GbE link long
// before CPUs run out; the shaped capacity (bandwidth annotations) is the
// link that counts when it is the smaller one.
#include <fmt/format.h>

#include "diagnosis/detectors.h"

namespace trainscope::diagnosis {

void DetectNetworkSaturated(const DetectorInput& in, const NetworkSettings& s,
                            std::vector<Finding>& out) {
  for (const auto& [key, pod] : in.recent.pods) {
    // One finding per pod: the fuller direction speaks for the link.
    std::optional<LinkUse> worst;
    bool receive = false;
    for (bool rx : {true, false}) {
      auto use = LinkUtilization(pod, rx);
      if (use && (!worst || use->ratio > worst->ratio)) {
        worst = use;
        receive = rx;
      }
    }
    if (!worst || worst->ratio < s.exit_ratio) continue;
    Finding f;
    f.level = worst->ratio >= s.enter_ratio ? Finding::Level::kEnter
                                            : Finding::Level::kHold;
    f.diagnosis =
        NewDiagnosis(kNetworkSaturated,
                     worst->ratio >= s.critical_ratio ? Severity::kCritical
                                                      : Severity::kWarning,
                     pod.meta);
    const char* direction = receive ? "receive" : "transmit";
    f.diagnosis.evidence = {
        {"direction", direction},
        {"bytes_per_second", Round4(worst->bytes_per_second)},
        {"capacity_bytes_per_second", Round4(worst->capacity_bytes_per_second)},
        {"utilization_ratio", Round4(worst->ratio)},
        {"capacity_source",
         worst->shaped ? "bandwidth_annotation" : "node_nic"}};
    f.diagnosis.summary = fmt::format(
        "{} {}s {:.1f} Mbit/s, {:.0f}% of its {:.0f} Mbit/s {}.", pod.meta.pod,
        direction, worst->bytes_per_second * 8 / 1e6, worst->ratio * 100,
        worst->capacity_bytes_per_second * 8 / 1e6,
        worst->shaped ? "bandwidth limit" : "node link");
    if (worst->shaped) {
      f.diagnosis.recommendations.push_back(fmt::format(
          "Raise or remove the kubernetes.io/{}-bandwidth annotation of {}.",
          receive ? "ingress" : "egress", pod.meta.pod));
    } else {
      f.diagnosis.recommendations.push_back(fmt::format(
          "Spread the job's PS and workers over more nodes (pod "
          "anti-affinity) so {}'s node link is not shared, or use faster "
          "NICs (10/25 GbE).",
          pod.meta.pod));
    }
    f.diagnosis.recommendations.push_back(
        "Cut the bytes per step: larger batches per step, gradient "
        "compression or fp16 gradients, and partitioned variables so the "
        "traffic spreads over all PS links.");
    out.push_back(std::move(f));
  }
}

}  // namespace trainscope::diagnosis
