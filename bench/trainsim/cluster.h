#pragma once

#include <string>
#include <vector>

#include "layout.h"
#include "scenario.h"

namespace trainsim {

// Which node each pod of a cluster scenario runs on, and the names of every
// node's kernel objects. Pure: derived from the scenario and the run id.

// The node index (into scenario.nodes) of each pod of `job`, given the
// job's pods in layout order (PS first). Applies jobs[].layout, then
// jobs[].pod_nodes. `names[i]` and `roles[i]` describe pod i.
std::vector<int> NodesOfJob(const Scenario& scenario, const Job& job,
                            const std::vector<std::string>& names,
                            const std::vector<PodRole>& roles,
                            const std::vector<int>& indexes);

// Replaces layout->nodes with one entry per scenario node, sets the fabric
// bridge and every pod's node and cgroup parent.
void PlaceOnNodes(const Scenario& scenario, Layout* layout);

// The per-node cgroup slice of node `k` of a run, and the regex group
// cleanup uses to recognise one: ^trainsim-<run>-node<k>.slice$.
std::string NodeSliceName(const std::string& run_id, int k);
inline constexpr const char* kNodeSlicePattern =
    "^trainsim-([0-9a-f]{8})-node[0-9]+\\.slice$";

}  // namespace trainsim
