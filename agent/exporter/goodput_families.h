#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "diagnosis/goodput.h"
#include "diagnosis/runner.h"
#include "exposition/export_context.h"

namespace trainscope {

// trainscope_job_seconds_total{state}, trainscope_job_lost_seconds_total
// {cause} and trainscope_job_goodput_ratio per training job with pods on
// this node (docs/metrics.md, "Goodput").
void AppendGoodputFamilies(const std::vector<diagnosis::JobGoodput>& jobs,
                           std::vector<prometheus::MetricFamily>& out);

// The section the agent registers: the runner's accounting.
FamilySection GoodputSection(const diagnosis::DiagnosisRunner& runner);

}  // namespace trainscope
