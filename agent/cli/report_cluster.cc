#include "cli/report_cluster.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <utility>

#include "cli/report_batches.h"
#include "diagnosis/analysis.h"
#include "diagnosis/detectors.h"

namespace trainscope::cli {
namespace {

// GET a Prometheus API path and check it answered `result_type` data.
Status QueryPrometheus(const HttpTarget& target, const std::string& url,
                       const std::string& path,
                       const std::multimap<std::string, std::string>& params,
                       const std::string& result_type, nlohmann::json* result) {
  nlohmann::json answer;
  if (Status s = GetJson(target, path, params, &answer); !s.ok()) {
    return s;
  }
  if (answer.value("status", "") != "success" || !answer.contains("data") ||
      !answer["data"].is_object() ||
      answer["data"].value("resultType", "") != result_type) {
    return Status::Error(url + " gave no " + result_type + " for " +
                         params.find("query")->second + ": " +
                         answer.dump().substr(0, 200));
  }
  auto found = answer["data"].find("result");
  *result = found != answer["data"].end() ? std::move(*found)
                                          : nlohmann::json::array();
  return Status::Ok();
}

// The batches to read: the whole cluster at once when it is small, else
// whole jobs and loose pods of about `--batch-series` series at a time
// (report_batches.h).
Status PlanClusterBatches(const HttpTarget& target, const ClusterViewQuery& q,
                          std::vector<Batch>* batches) {
  const std::string base =
      FilterMatchers(q.namespace_name, q.training_job, q.extra_matchers);
  if (q.batch_series == 0) {
    *batches = {Batch{{base}, 0}};
    return Status::Ok();
  }
  nlohmann::json roster;
  if (Status s =
          QueryPrometheus(target, q.prometheus, "/api/v1/query",
                          {{"query", PodRosterQuery(base, q.range_seconds)},
                           {"time", std::to_string(q.end)}},
                          "vector", &roster);
      !s.ok()) {
    return s;
  }
  std::vector<PodRef> pods;
  if (Status s = PodRefsFromVector(roster, &pods); !s.ok()) {
    return Status::Error(q.prometheus + ": " + s.message());
  }
  *batches = PlanBatches(pods, q.batch_series, base);
  return Status::Ok();
}

// One batch: its series over the range into a window (each answer dropped
// once added), replayed through the detectors.
Status EvaluateBatch(const HttpTarget& target, const ClusterViewQuery& q,
                     const Batch& batch, ClusterEvaluation* out) {
  WindowBuilder builder;
  // Two steps without a sample: the agent is down or unreachable, so its
  // pods are judged on what it sent before (a scrape may lag one step).
  const double grace = std::max(2 * q.step_seconds, 30.0);
  for (const auto& query :
       ClusterQueries(batch.matcher_sets, q.extra_matchers)) {
    nlohmann::json result;
    if (Status s =
            QueryPrometheus(target, q.prometheus, "/api/v1/query_range",
                            {{"query", query.promql},
                             {"start", std::to_string(q.end - q.range_seconds)},
                             {"end", std::to_string(q.end)},
                             {"step", std::to_string(q.step_seconds)}},
                            "matrix", &result);
        !s.ok()) {
      return s;
    }
    // Node series are the same in every batch: the first one judges them.
    if (query.name == "node_cpus" && out->batches == 0) {
      out->missing = MissingNodes(result, q.end, grace);
    }
    if (Status s = builder.Add(query.name, result); !s.ok()) {
      return Status::Error(q.prometheus + ": " + s.message());
    }
  }
  const diagnosis::Window window = builder.Finish();
  diagnosis::ReplayResult replay =
      diagnosis::Replay(window, diagnosis::DiagnosisSettings{});
  std::move(replay.active.begin(), replay.active.end(),
            std::back_inserter(out->diagnoses));
  std::move(replay.jobs.begin(), replay.jobs.end(),
            std::back_inserter(out->jobs));
  for (auto& pod : PodsOfWindow(window)) {
    if (!pod.training_job.empty()) out->pods.push_back(std::move(pod));
  }
  out->pods_seen += window.pods.size();
  out->evaluations = std::max(out->evaluations, replay.evaluations);
  ++out->batches;
  return Status::Ok();
}

// Most severe first, then by kind and pod (the engine's order).
void SortDiagnoses(std::vector<diagnosis::Diagnosis>& ds) {
  std::stable_sort(ds.begin(), ds.end(), [](const auto& a, const auto& b) {
    if (a.severity != b.severity) return a.severity > b.severity;
    if (a.kind != b.kind) return a.kind < b.kind;
    if (a.namespace_name != b.namespace_name) {
      return a.namespace_name < b.namespace_name;
    }
    if (a.pod != b.pod) return a.pod < b.pod;
    return a.node < b.node;
  });
}

}  // namespace

Status EvaluateCluster(const HttpTarget& target, const ClusterViewQuery& query,
                       ClusterEvaluation* out) {
  std::vector<Batch> batches;
  if (Status s = PlanClusterBatches(target, query, &batches); !s.ok()) {
    return s;
  }
  for (const auto& batch : batches) {
    if (Status s = EvaluateBatch(target, query, batch, out); !s.ok()) return s;
  }
  const diagnosis::DiagnosisSettings settings;
  out->diagnoses = diagnosis::MergeNodeLinkDiagnoses(std::move(out->diagnoses),
                                                     settings.network);
  SortDiagnoses(out->diagnoses);
  return Status::Ok();
}

}  // namespace trainscope::cli
