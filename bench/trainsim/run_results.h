#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "scenario.h"
#include "step_rates.h"

namespace trainsim {

// The diagnoses a run's reports carried, for `verify --results`: each
// (kind, pod, node) as last seen, and the history of its cost figures
// (evidence.cost_fraction, evidence.expected_speedup). Pure.
class DiagnosisLog {
 public:
  // Every diagnosis of a report (any severity) seen `now_s` after the start.
  void Observe(const nlohmann::json& report, double now_s);
  // Per key: the diagnosis as last seen (with "last_seen_s"), and the
  // medians of its cost figures over the polls since `from_s`.
  nlohmann::ordered_json Json(double from_s) const;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  struct Entry {
    nlohmann::json last;
    double last_seen_s = 0;
    std::vector<std::pair<double, double>> speedup;  // (t, value)
    std::vector<std::pair<double, double>> cost;
  };
  std::map<Key, Entry> entries_;
};

// The document `verify --results FILE` writes (docs/trainsim.md "Results
// file"): the verdict, per worker and per job the true and estimated
// steps/s, and the diagnoses with their cost figures.
nlohmann::ordered_json RunResultsJson(const Scenario& scenario,
                                      const StepRateTracker& rates,
                                      const DiagnosisLog& diagnoses,
                                      const nlohmann::ordered_json& verdict);

// Writes `doc` to `path` atomically (path.tmp, then renamed).
void WriteJsonFile(const std::string& path, const nlohmann::ordered_json& doc);

}  // namespace trainsim
