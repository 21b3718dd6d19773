#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "exposition/export_context.h"

namespace trainscope {

// trainscope_node_*: CPU, memory and physical NICs of this node.
void AppendNodeFamilies(const ExportContext& ctx,
                        std::vector<prometheus::MetricFamily>& out);

}  // namespace trainscope
