#pragma once

// The cluster view's evaluation: the agents' series from Prometheus, read in
// batches (report_batches.h), replayed through the detectors, merged.
// report_command.cc turns the result into the report.

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "cli/report_http.h"
#include "cli/report_prometheus.h"
#include "cli/report_triage.h"
#include "diagnosis/diagnosis.h"
#include "diagnosis/headroom.h"
#include "diagnosis/ps_share.h"
#include "diagnosis/training_speed.h"
#include "trainscope/pod.h"
#include "trainscope/status.h"

namespace trainscope::cli {

struct ClusterViewQuery {
  std::string prometheus;  // the URL, for messages
  std::string namespace_name;
  std::string training_job;
  std::string extra_matchers;  // checked --selector matchers
  double range_seconds = 600;
  double step_seconds = 15;
  double end = 0;               // unix seconds
  size_t batch_series = 50000;  // 0 = one window
  // kAuto: triage (report_triage.h) when the cluster needs several batches.
  TriageMode triage = TriageMode::kAuto;
};

// What the triage did, for the report's `source`.
struct TriageSummary {
  bool used = false;
  bool recording_rules = true;  // false: raw series (no Trainscope rules)
  size_t jobs = 0, jobs_replayed = 0;
  size_t training_pods = 0;               // the triage lists training pods only
  size_t pods_replayed = 0;               // with their whole jobs
  size_t pods_without_jobs_replayed = 0;  // on flagged nodes, alone
  std::map<std::string, size_t> flagged_by;
};

// What the batches of one cluster view add up to.
struct ClusterEvaluation {
  // Active at the end of the range, node-link findings merged across
  // batches, in the report order (SortByExpectedGain).
  std::vector<diagnosis::Diagnosis> diagnoses;
  std::vector<diagnosis::JobTraffic> jobs;       // of the last evaluation
  std::vector<diagnosis::JobSpeed> speeds;       // of the last evaluation
  std::vector<diagnosis::JobHeadroom> headroom;  // of the last evaluation
  PodList pods;  // training pods (the report's job list)
  size_t pods_seen = 0;
  std::vector<MissingNode> missing;
  size_t evaluations = 0;
  size_t batches = 0;
  TriageSummary triage;
};

// Plans the batches, then reads, replays and drops them one at a time.
// Errors name the query and what Prometheus answered.
Status EvaluateCluster(const HttpTarget& target, const ClusterViewQuery& query,
                       ClusterEvaluation* out);

}  // namespace trainscope::cli
