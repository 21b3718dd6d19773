#pragma once

#include <nlohmann/json.hpp>
#include <string>

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

}  // namespace trainsim
