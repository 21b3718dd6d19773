#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "exposition/export_context.h"

namespace trainscope {

// Per-device GPU series (labels gpu, UUID, modelName as dcgm-exporter names
// them, plus node) and per-pod GPU usage (pod labels, container, and the
// device labels). Values the device did not report are left out.
void AppendGpuFamilies(const ExportContext& ctx,
                       std::vector<prometheus::MetricFamily>& out);

}  // namespace trainscope
