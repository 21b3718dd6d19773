#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "scenario.h"

namespace trainsim {

// Matches the agent's reports against a scenario's expect/allow lists
// (DESIGN.md "Scenario format"). Pure: the caller feeds reports and times.
class VerifyTracker {
 public:
  explicit VerifyTracker(const Scenario& scenario);

  // One GET /api/v1/report body, seen `now_s` seconds after the job started.
  void Observe(const nlohmann::json& report, double now_s);

  bool Passed() const;
  // The JSON line `trainsim verify` prints last, keys in DESIGN.md's order.
  nlohmann::ordered_json ResultJson() const;
  // Expected (kind, pod) pairs seen so far, for progress lines.
  size_t DetectedCount() const;

 private:
  double FaultStart(const std::string& pod, double seen_s) const;
  bool Listed(const std::vector<Expectation>& list, const std::string& kind,
              const std::string& pod) const;

  const Scenario& scenario_;
  std::vector<std::string> pods_;
  // (kind, pod) -> first time it was seen as warning or critical.
  std::map<std::pair<std::string, std::string>, double> seen_;
};

}  // namespace trainsim
