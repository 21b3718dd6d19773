#pragma once

#include <prometheus/metric_family.h>

#include <vector>

#include "http/server.h"

namespace trainscope {

// The HTTP server's own health: trainscope_http_connections,
// trainscope_http_max_connections and
// trainscope_http_connections_closed_total{reason}. A rising closed count
// means clients are hitting the limits (docs/reliability.md).
void AppendHttpFamilies(const HttpServerStats& stats, const HttpLimits& limits,
                        std::vector<prometheus::MetricFamily>& out);

}  // namespace trainscope
