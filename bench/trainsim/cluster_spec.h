#pragma once

#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "scenario.h"

namespace trainsim {

// The cluster half of the scenario format (DESIGN.md "Scenario format,
// second edition"): `nodes`, jobs[].layout/ps_nodes/seed/pod_nodes. Kept
// apart from scenario.cc so the per-job format and the placement over
// nodes evolve separately. Every function throws ScenarioError naming the
// JSON path.

// The job keys ParseJobClusterKey understands.
inline constexpr const char* kJobClusterKeys[] = {"layout", "ps_nodes", "seed",
                                                  "pod_nodes"};
void ParseJobClusterKey(const std::string& key, const nlohmann::json& value,
                        const std::string& path, Job* job);

// `nodes`: a non-empty array of {"name", "nic_mbit"?} with unique names
// that are valid Kubernetes node names.
std::vector<NodeSpec> ParseNodes(const nlohmann::json& value);

// Cross-field checks once the whole scenario is read: layouts only with
// nodes (and required with them), ps_nodes within the node count,
// pod_nodes naming known pods and nodes, node faults and node expectations
// naming declared nodes. `pods`: every pod name of the scenario.
void ValidateCluster(const Scenario& scenario,
                     const std::set<std::string>& pods);

}  // namespace trainsim
