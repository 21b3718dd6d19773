#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "exposition/export_context.h"

namespace trainscope {

// The kubelet's restart state of every exported pod, from the API's
// status.containerStatuses (absent for pods whose source has no status,
// such as --discovery cgroup): trainscope_container_restarts_total and
// trainscope_pod_restarts_total (their sum), the newest exit per container
// (trainscope_container_last_terminated_timestamp_seconds, labelled with
// its reason, exit code and signal), the running container's start
// (trainscope_container_started_timestamp_seconds) and
// trainscope_container_waiting.
void AppendPodStatusFamilies(const ExportContext& ctx,
                             std::vector<prometheus::MetricFamily>& out);

}  // namespace trainscope
