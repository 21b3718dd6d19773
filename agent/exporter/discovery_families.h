#pragma once

#include <prometheus/metric_family.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "discovery/pod_source.h"

namespace trainscope {

// The peer-pod watch's health: trainscope_discovery_peer_pods,
// _peer_ready and _peer_errors_total, labelled {mode}. Nothing when the
// watch is off (stats empty), so an agent without it has no such series.
void AppendPeerDiscoveryFamilies(const std::string& mode,
                                 const std::optional<DiscoveryStats>& stats,
                                 size_t peer_pods,
                                 std::vector<prometheus::MetricFamily>& out);

}  // namespace trainscope
