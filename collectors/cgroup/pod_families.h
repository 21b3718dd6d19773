#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "exposition/export_context.h"

namespace trainscope {

// trainscope_pod_* and trainscope_container_* from the cgroup and procnet
// samples, plus trainscope_pod_info for every known pod.
void AppendPodFamilies(const ExportContext& ctx,
                       std::vector<prometheus::MetricFamily>& out);

}  // namespace trainscope
