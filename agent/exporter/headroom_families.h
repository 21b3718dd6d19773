#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "diagnosis/headroom.h"
#include "diagnosis/runner.h"
#include "exposition/export_context.h"

namespace trainscope {

// The scaling forecast of each PS job (diagnosis::ComputeHeadroom over the
// evaluation window): trainscope_job_headroom_ratio per resource the job's
// PS share, and trainscope_job_forecast_max_workers /
// _max_steps_per_second from the fullest. The same numbers as the report's
// jobs[].headroom. A job without a measured resource has no series.
void AppendHeadroomFamilies(const std::vector<diagnosis::JobHeadroom>& jobs,
                            std::vector<prometheus::MetricFamily>& out);

// The section the agent registers: the runner's latest forecast.
FamilySection HeadroomSection(const diagnosis::DiagnosisRunner& runner);

}  // namespace trainscope
