#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "scenario.h"

namespace trainsim {

// Matches one view's reports (an agent's node view, or the cluster view
// from Prometheus) against a scenario's expect/allow lists (DESIGN.md
// "Scenario format"). Pure: the caller feeds reports and times.
//
// A diagnosis with a pod of the scenario matches entries with that pod; a
// job-level one (empty pod, namespace + training_job naming a scenario job)
// matches entries with that `job` ("namespace/name"); a node-level one
// (empty pod, "node" naming a scenario node) matches entries with that
// node. An entry's `severity`, when given, is required for it to
// count as detected (without one, only warning or critical count). Whether
// a diagnosis is unexpected ignores severity, except that a warning or
// critical one whose only expect entries say "info" is unexpected (listed
// with its severity): the scenario states the condition is harmless.
class VerifyTracker {
 public:
  explicit VerifyTracker(const Scenario& scenario);

  // One report body (GET /api/v1/report or `trainscope report --json`),
  // seen `now_s` seconds after the job started.
  void Observe(const nlohmann::json& report, double now_s);

  bool Passed() const;
  // The JSON line `trainsim verify` prints last, keys in DESIGN.md's order.
  nlohmann::ordered_json ResultJson() const;
  // {detected, missing, unexpected}: one view in a cluster's result. With
  // `required` (one flag per expect entry, in order), each detected and
  // missing entry says whether this view must name it.
  nlohmann::ordered_json ViewJson(
      const std::vector<bool>* required = nullptr) const;
  // Expected entries seen so far, for progress lines.
  size_t DetectedCount() const;
  // When an expect entry was first seen (with its severity, if required).
  std::optional<double> FirstSeen(const Expectation& e) const;
  // Warning/critical diagnoses no expect or allow entry covers, and those
  // the scenario expects as info only.
  nlohmann::ordered_json Unexpected() const;
  // after_s of a detection at `seen_s`: from the latest fault on the pod
  // (or node) that had started by then, else from the job's start.
  double AfterS(const Expectation& e, double seen_s) const;

 private:
  // (kind, pod, node, job): node only for node-level diagnoses, job
  // ("namespace/name") only for job-level ones.
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  static Key KeyOf(const Expectation& e);
  static bool Matches(const Expectation& e, const Key& key);
  bool Covered(const std::vector<Expectation>& list, const Key& key) const;
  // Every expect entry of the key states severity "info" (and one exists).
  bool OnlyInfoExpected(const Key& key) const;

  const Scenario& scenario_;
  std::set<std::string> pods_;
  std::set<std::string> nodes_;
  std::set<std::string> jobs_;  // "namespace/name"
  // key -> severity -> first time seen (info, warning and critical).
  std::map<Key, std::map<std::string, double>> seen_;
};

// A severity that is a finding (warning, critical), as opposed to info.
bool IsFinding(const std::string& severity);

// Expectation as the JSON entry of detected/missing/unexpected lists.
nlohmann::ordered_json EntryJson(const std::string& kind,
                                 const std::string& pod,
                                 const std::string& node,
                                 const std::string& job = "");

}  // namespace trainsim
