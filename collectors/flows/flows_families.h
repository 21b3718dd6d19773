#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "exposition/export_context.h"

namespace trainscope {

// trainscope_peer_* from Snapshot::peer_traffic, the workers' step rates,
// and the flows collector's own health (trainscope_flows_*) from
// its FlowsSample part: the snapshot is all it reads.
void AppendFlowsFamilies(const ExportContext& ctx,
                         std::vector<prometheus::MetricFamily>& out);

}  // namespace trainscope
