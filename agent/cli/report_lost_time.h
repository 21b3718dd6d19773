#pragma once

// The cluster report's "lost time" section: over the report's range, the
// time each training job lost by cause and its goodput, from the agents'
// trainscope_job_* counters in Prometheus (docs/diagnosis.md, "Goodput and
// lost time").

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/report_http.h"
#include "cli/report_prometheus.h"
#include "trainscope/status.h"

namespace trainscope::cli {

struct JobLostTime {
  std::string namespace_name;
  std::string training_job;
  double seconds = 0;                          // all states
  std::map<std::string, double> lost_seconds;  // by cause
  double GoodputRatio() const;                 // 1 - lost / seconds
};

struct LostTime {
  std::vector<JobLostTime> jobs;  // lowest goodput first
  double TotalSeconds() const;
  // Sum over jobs per cause.
  std::map<std::string, double> ByCause() const;
};

// Instant queries at the range's end: each node's agent counts the jobs it
// holds pods of, so max by job (and cause) over nodes, then the report sums
// over jobs. `matchers` as FilterMatchers gives them.
std::vector<PromQuery> LostTimeQueries(const std::string& matchers,
                                       double range_seconds);

// From the `data.result` vectors of those queries, by PromQuery::name. An
// unexpected shape is an error naming the query.
Status LostTimeFromAnswers(const std::map<std::string, nlohmann::json>& answers,
                           LostTime* out);

// Runs the queries against Prometheus at `end` (unix seconds).
Status QueryLostTime(const HttpTarget& target, const std::string& matchers,
                     double range_seconds, double end, LostTime* out);

// The report's `lost_time`: {"total_seconds", "by_cause": {kind: s},
// "jobs": [{"namespace", "training_job", "goodput_ratio",
// "lost_seconds": {kind: s}}]}.
nlohmann::json LostTimeJson(const LostTime& lost);

}  // namespace trainscope::cli
