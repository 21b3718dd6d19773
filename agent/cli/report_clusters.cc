#include "cli/report_clusters.h"

#include <set>

#include "cli/report_prometheus.h"
#include "trainscope/metric_names.h"

namespace trainscope::cli {
namespace {

// The report's lists whose items name their cluster.
constexpr const char* kItemLists[] = {"diagnoses", "jobs", "missing_nodes"};

void TagItems(nlohmann::json& list, const std::string& cluster,
              nlohmann::json& into) {
  if (!list.is_array()) return;
  for (auto& item : list) {
    if (item.is_object()) item["cluster"] = cluster;
    into.push_back(std::move(item));
  }
}

void AddLostTime(const nlohmann::json& lost, const std::string& cluster,
                 nlohmann::json& total) {
  if (!lost.is_object()) return;
  if (!total.is_object()) {
    total = {{"total_seconds", 0.0},
             {"by_cause", nlohmann::json::object()},
             {"jobs", nlohmann::json::array()}};
  }
  total["total_seconds"] =
      total["total_seconds"].get<double>() + lost.value("total_seconds", 0.0);
  const auto causes = lost.find("by_cause");
  if (causes != lost.end() && causes->is_object()) {
    for (const auto& [cause, seconds] : causes->items()) {
      if (!seconds.is_number()) continue;
      total["by_cause"][cause] =
          total["by_cause"].value(cause, 0.0) + seconds.get<double>();
    }
  }
  const auto jobs = lost.find("jobs");
  if (jobs == lost.end()) return;
  nlohmann::json tagged = *jobs;
  TagItems(tagged, cluster, total["jobs"]);
}

}  // namespace

Status ListClusters(const HttpTarget& target, const std::string& url,
                    const std::string& label, const std::string& extra_matchers,
                    double range_seconds, double end,
                    std::vector<std::string>* clusters) {
  // Every pod the cluster view judges has this series; an agent's node-only
  // series without pods leave nothing to report.
  const std::string promql = "count by (" + label + ") (last_over_time(" +
                             std::string(kPodInfo) + "{" + extra_matchers +
                             "}[" + std::to_string(int64_t(range_seconds)) +
                             "s]))";
  nlohmann::json result;
  if (Status s =
          QueryPrometheus(target, url, "/api/v1/query",
                          {{"query", promql}, {"time", std::to_string(end)}},
                          "vector", &result);
      !s.ok())
    return s;
  std::set<std::string> found;
  if (result.is_array()) {
    for (const auto& sample : result) {
      const auto metric = sample.find("metric");
      if (sample.is_object() && metric != sample.end())
        found.insert(LabelOf(*metric, label.c_str()));
    }
  }
  clusters->assign(found.begin(), found.end());
  return Status::Ok();
}

std::string ClusterMatchers(const std::string& extra_matchers,
                            const std::string& label,
                            const std::string& cluster) {
  const std::string one = label + "=" + PromQLString(cluster);
  return extra_matchers.empty() ? one : extra_matchers + "," + one;
}

nlohmann::json MergeClusterReports(const std::string& label,
                                   std::vector<ClusterReport> reports) {
  if (reports.empty()) return nlohmann::json::object();
  nlohmann::json merged = reports.front().report;
  nlohmann::json lost;
  nlohmann::json per_cluster = nlohmann::json::array();
  int64_t evaluations = 0, batches = 0;
  for (const char* list : kItemLists) merged[list] = nlohmann::json::array();
  for (auto& [cluster, report] : reports) {
    for (const char* list : kItemLists)
      TagItems(report[list], cluster, merged[list]);
    AddLostTime(report.value("lost_time", nlohmann::json()), cluster, lost);
    const nlohmann::json source =
        report.value("source", nlohmann::json::object());
    evaluations += source.value("evaluations", int64_t{0});
    batches += source.value("batches", int64_t{0});
    per_cluster.push_back(
        {{"cluster", cluster},
         {"evaluations", source.value("evaluations", 0)},
         {"batches", source.value("batches", 0)},
         {"triage", source.value("triage", nlohmann::json())}});
  }
  merged.erase("lost_time");
  if (lost.is_object()) merged["lost_time"] = std::move(lost);
  merged["source"]["evaluations"] = evaluations;
  merged["source"]["batches"] = batches;
  merged["source"].erase("triage");
  merged["source"]["cluster_label"] = label;
  merged["source"]["clusters"] = std::move(per_cluster);
  return merged;
}

}  // namespace trainscope::cli
