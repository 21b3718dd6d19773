#pragma once

#include <prometheus/metric_family.h>

#include <cstddef>
#include <vector>

#include "diagnosis/ps_share.h"
#include "diagnosis/runner.h"
#include "exposition/export_context.h"

namespace trainscope {

// trainscope_ps_traffic_share_ratio / _skew_ratio from the diagnosis' PS
// traffic per job (diagnosis::ComputeJobTraffic over its evaluation window
// of `window_samples` snapshots), so the metrics, the report's
// ps_traffic_share and hot_parameter_server always agree. A job without PS
// traffic in the window has no series (rather than a made-up 0).
void AppendPsShareFamilies(const std::vector<diagnosis::JobTraffic>& jobs,
                           size_t window_samples,
                           std::vector<prometheus::MetricFamily>& out);

// The section the agent registers: the runner's latest jobs.
FamilySection PsShareSection(const diagnosis::DiagnosisRunner& runner);

}  // namespace trainscope
