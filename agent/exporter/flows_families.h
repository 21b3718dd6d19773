#pragma once

#include <prometheus/metric_family.h>

#include <cstddef>
#include <vector>

#include "exporter/export_context.h"
#include "flows/flows_report.h"
#include "flows/ps_share.h"
#include "history.h"

namespace trainscope {

// trainscope_peer_* from Snapshot::peer_traffic and the flows collector's
// own health from its latest FlowsReport.
void AppendFlowsFamilies(const ExportContext& ctx,
                         std::vector<prometheus::MetricFamily>& out);

// The same with an explicit report (nullptr: peer series only); for tests.
void AppendFlowsFamiliesFrom(const ExportContext& ctx,
                             const FlowsReport* report,
                             std::vector<prometheus::MetricFamily>& out);

// PS traffic share and skew over the last `window` snapshots (newest
// included); 6 samples = 5 intervals, 25 s at the default 5 s interval.
constexpr size_t kPsShareWindowSamples = 6;
void AppendPsShareFamilies(const std::vector<PsTrafficShare>& shares,
                           size_t window,
                           std::vector<prometheus::MetricFamily>& out);
// The section the agent registers: shares computed from History::Window.
FamilySection PsShareSection(const History& history,
                             size_t window = kPsShareWindowSamples);

}  // namespace trainscope
