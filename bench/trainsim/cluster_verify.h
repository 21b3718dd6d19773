#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "scenario.h"
#include "verify_match.h"

namespace trainsim {

// `verify` of a cluster scenario (DESIGN.md "Scenario format, second
// edition"): one VerifyTracker per view, the cluster view (`trainscope
// report --prometheus`), the same with `--triage on` (the path a large
// cluster takes, report_triage.h) and each node's agent. Each expect entry
// must be named by both cluster views and by at least one node view; a warning
// or critical diagnosis outside expect/allow in any view fails the run. Pure.
class ClusterVerify {
 public:
  static constexpr const char* kClusterView = "cluster";
  static constexpr const char* kClusterTriageView = "cluster_triage";

  ClusterVerify(const Scenario& scenario, std::vector<std::string> nodes);

  // `view`: kClusterView, kClusterTriageView or a node name.
  void Observe(const std::string& view, const nlohmann::json& report,
               double now_s);
  // Expected entries both views have named so far.
  size_t DetectedCount() const;
  // The last line of verify: scenario, passed, detected, missing,
  // unexpected (over all views), then "views" with each view's own lists.
  nlohmann::ordered_json ResultJson() const;

 private:
  const Scenario& scenario_;
  std::vector<std::string> order_;  // cluster views, then nodes as declared
  std::map<std::string, std::unique_ptr<VerifyTracker>> views_;
};

// The cluster view: runs `cli report --prometheus URL --json --range R
// --step S [extra_args]` (bounded) and parses its JSON; nullopt (with the
// reason in *error) when it fails.
std::optional<nlohmann::json> ClusterReport(
    const std::string& cli, const std::string& prometheus, double range_s,
    double step_s, std::string* error,
    const std::vector<std::string>& extra_args = {});

// Where the `trainscope` CLI is: $TRAINSIM_TRAINSCOPE_CLI, next to trainsim
// in a build tree (<build>/agent/cli/trainscope), or "" when not found.
std::string DefaultCliPath();

}  // namespace trainsim
