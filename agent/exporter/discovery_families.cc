#include "exporter/discovery_families.h"

#include "exposition/family_builder.h"

namespace trainscope {

void AppendPeerDiscoveryFamilies(const std::string& mode,
                                 const std::optional<DiscoveryStats>& stats,
                                 size_t peer_pods,
                                 std::vector<prometheus::MetricFamily>& out) {
  if (!stats) return;
  using prometheus::MetricType;
  const LabelMap labels = {{"mode", mode}};
  FamilyBuilder pods("trainscope_discovery_peer_pods",
                     "Pods in the peer table (--peer-pods-selector / "
                     "--peer-pods-namespaces): pods of any node that name flow "
                     "peers; they get no pod series.",
                     MetricType::Gauge);
  pods.Add(labels, static_cast<double>(peer_pods));
  pods.MoveInto(out);
  FamilyBuilder ready("trainscope_discovery_peer_ready",
                      "1 once every peer-pod watch has listed its pods.",
                      MetricType::Gauge);
  ready.Add(labels, stats->ready ? 1.0 : 0.0);
  ready.MoveInto(out);
  FamilyBuilder errors("trainscope_discovery_peer_errors_total",
                       "Failed peer-pod list/watch attempts; the last known "
                       "peer pods are kept meanwhile.",
                       MetricType::Counter);
  errors.Add(labels, static_cast<double>(stats->errors_total));
  errors.MoveInto(out);
}

}  // namespace trainscope
