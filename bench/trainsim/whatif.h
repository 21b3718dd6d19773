#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainsim {

// `trainsim whatif`: the speed-up a diagnosis predicted (its
// evidence.expected_speedup) against the one measured from the ground
// truth of `verify --results` files, without extra runs
// (docs/trainsim.md "What-if checks"). Pure.
struct WhatIfResult {
  std::string job;          // namespace/name of the diagnosed pod's job
  double predicted = 0;     // expected_speedup, median of the last minute
  double measured = 0;      // ratio of true job steps/s
  double error = 0;         // (predicted - measured) / measured
  bool passed = false;      // |error| <= tolerance
  std::string measured_as;  // how `measured` was taken, for the print-out
};

// `diagnosed`: the results of the run with the diagnosis. With `fixed` (the
// results of the same job with the fix applied), measured = the job's true
// steps/s there over its steps/s in `diagnosed`, both over the last minute;
// without, measured = the job's true steps/s before the first fault over the
// last minute of the same run. Throws std::runtime_error naming what is
// missing (no such diagnosis, no figure, no job).
WhatIfResult CompareWhatIf(const nlohmann::json& diagnosed,
                           const nlohmann::json* fixed, const std::string& kind,
                           const std::string& pod, double tolerance);

// `trainsim scaling`: the scaling forecast of a diagnosis (its
// evidence.headroom.max_steps_per_second, docs/diagnosis.md "Headroom") in
// one run against the step rate the same job really reached with more
// workers: the largest true steps/s over all runs (the plateau, when the
// largest run is past the bottleneck). Throws std::runtime_error naming
// what is missing.
struct ScalingResult {
  std::string job;
  double forecast = 0;          // steps/s where scaling stops
  double forecast_workers = 0;  // headroom.max_workers
  size_t workers = 0;           // headroom.workers of the forecast run
  double plateau = 0;           // the largest true steps/s measured
  std::string plateau_run;      // the scenario that reached it
  double error = 0;             // (forecast - plateau) / plateau
  bool passed = false;
};
ScalingResult CompareScaling(const nlohmann::json& forecast_run,
                             const std::vector<nlohmann::json>& runs,
                             const std::string& kind, const std::string& pod,
                             double tolerance);

}  // namespace trainsim
