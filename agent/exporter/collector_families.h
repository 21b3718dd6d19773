#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "exposition/export_context.h"

namespace trainscope {

// trainscope_collector_up / _duration_seconds for every collector that ran,
// and the snapshot's time.
void AppendCollectorFamilies(const ExportContext& ctx,
                             std::vector<prometheus::MetricFamily>& out);

}  // namespace trainscope
