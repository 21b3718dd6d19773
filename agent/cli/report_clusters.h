#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cli/report_http.h"
#include "trainscope/status.h"

namespace trainscope::cli {

// One Prometheus holds one cluster: its external labels (cluster="a") are
// not in its own answers. Thanos Query, Mimir or Cortex in front of several
// add them, and the same namespace, job and pod names may then stand for
// different pods in different clusters. The cluster view judges each
// cluster alone and merges the reports, each item naming its cluster
// (docs/performance.md, "Many clusters: Thanos").

// The values of `label` on the training pods' series in the range, sorted;
// "" stands for series without it. Empty when no pod series is there.
// `url` names the server in errors.
Status ListClusters(const HttpTarget& target, const std::string& url,
                    const std::string& label, const std::string& extra_matchers,
                    double range_seconds, double end,
                    std::vector<std::string>* clusters);

// `extra_matchers` narrowed to one cluster (label="" matches series
// without the label).
std::string ClusterMatchers(const std::string& extra_matchers,
                            const std::string& label,
                            const std::string& cluster);

// One report per cluster, as the cluster view builds it for one.
struct ClusterReport {
  std::string cluster;
  nlohmann::json report;
};

// One report of several clusters: every diagnosis, job, missing node and
// job of the lost time carries "cluster"; lost seconds add up; the source
// sums the evaluations and batches and lists each cluster's own.
nlohmann::json MergeClusterReports(const std::string& label,
                                   std::vector<ClusterReport> reports);

}  // namespace trainscope::cli
