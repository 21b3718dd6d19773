#pragma once

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "layout.h"
#include "scenario.h"
#include "verify_match.h"

namespace trainsim {

// Which node views must name an expect entry (DESIGN.md "Scenario format,
// third edition"; docs/trainsim.md "Which view must name what"), from the
// pods' placement (`layout`, as MakeLayout places them). A node-level entry:
// that node. A pod-level entry of a kind that judges one pod or node (the
// detector registry's kPodOrNode): the pod's node. A job-wide kind: every
// node that holds enough of the job to judge it, possibly none:
// - straggler_worker: the suspect and at least min_workers - 1 other
//   workers of the job on the node; or, with fewer than min_workers workers
//   there, a PS of the job holding variables and a job of min_workers
//   workers or more (the agent compares every worker from that PS' side;
//   not in ps_sync jobs, whose workers all move the same bytes).
// - allreduce_straggler, allreduce_slow_link: the suspect and at least one
//   other rank (worker or master) of the job.
// - hot_parameter_server: a worker of the job (it talks to every PS holding
//   a variable), or every PS of the job.
// - input_io_bound: the suspect and at least two other workers of the job.
// - any other job-wide kind: every pod of the job.
// Node names in the scenario's declared order.
std::vector<std::string> NodesThatMustName(const Layout& layout,
                                           const Expectation& e);

// `verify` of a cluster scenario: one VerifyTracker per view, the cluster
// view (`trainscope report --prometheus`), the same with `--triage on` (the
// path a large cluster takes, report_triage.h) and each node's agent. Each
// expect entry must be named by both cluster views and by the node views
// NodesThatMustName gives; a warning or critical diagnosis outside
// expect/allow in any view fails the run. Pure.
class ClusterVerify {
 public:
  static constexpr const char* kClusterView = "cluster";
  static constexpr const char* kClusterTriageView = "cluster_triage";

  ClusterVerify(const Scenario& scenario, std::vector<std::string> nodes);

  // `view`: kClusterView, kClusterTriageView or a node name.
  void Observe(const std::string& view, const nlohmann::json& report,
               double now_s);
  // Expected entries every required view has named so far.
  size_t DetectedCount() const;
  // The views that must name `e`: both cluster views, then node views.
  const std::vector<std::string>& RequiredViews(size_t expect_index) const;
  // The last line of verify: scenario, passed, detected, missing,
  // unexpected (over all views), then "views" with each view's own lists.
  // Each detected/missing entry lists its "required_views"; a missing one
  // also "missing_from", the required views that have not named it; each
  // entry of a view's own lists says whether that view is "required".
  nlohmann::ordered_json ResultJson() const;

 private:
  const Scenario& scenario_;
  std::vector<std::string> order_;  // cluster views, then nodes as declared
  std::map<std::string, std::unique_ptr<VerifyTracker>> views_;
  // Per expect entry (same order): the views that must name it.
  std::vector<std::vector<std::string>> required_;

  // When every required view had named expect entry `i`.
  std::optional<double> SeenByAll(size_t i) const;
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
