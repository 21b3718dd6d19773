#include "cluster.h"

#include <algorithm>
#include <cstdint>

namespace trainsim {
namespace {

int NodeIndex(const Scenario& s, const std::string& name) {
  for (size_t i = 0; i < s.nodes.size(); ++i)
    if (s.nodes[i].name == name) return static_cast<int>(i);
  return -1;  // validation refuses unknown names before this runs
}

}  // namespace

std::string NodeSliceName(const std::string& run_id, int k) {
  return "trainsim-" + run_id + "-node" + std::to_string(k) + ".slice";
}

std::vector<int> NodesOfJob(const Scenario& s, const Job& job,
                            const std::vector<std::string>& names,
                            const std::vector<PodRole>& roles,
                            const std::vector<int>& indexes) {
  const int n = static_cast<int>(s.nodes.size());
  const NodeLayout layout = job.layout.value_or(NodeLayout::kPsWithWorkers);
  std::vector<int> out(names.size(), 0);
  for (size_t i = 0; i < names.size(); ++i) {
    const bool ps = roles[i] == PodRole::kPs;
    const int k = indexes[i];
    switch (layout) {
      case NodeLayout::kPsWithWorkers:
        out[i] = k % n;
        break;
      case NodeLayout::kPsIsolated: {
        const int ps_nodes = std::max(1, std::min(job.ps_nodes, n - 1));
        out[i] = ps ? k % ps_nodes : ps_nodes + k % (n - ps_nodes);
        break;
      }
      case NodeLayout::kSpread:
        out[i] = static_cast<int>(i) % n;
        break;
      case NodeLayout::kRandom:
        // Per pod name, so adding a worker moves no other pod.
        out[i] = static_cast<int>(Fnv1a(names[i], job.layout_seed) %
                                  static_cast<uint64_t>(n));
        break;
    }
    auto it = job.pod_nodes.find(names[i]);
    if (it != job.pod_nodes.end() && NodeIndex(s, it->second) >= 0)
      out[i] = NodeIndex(s, it->second);
  }
  return out;
}

void PlaceOnNodes(const Scenario& s, Layout* layout) {
  const std::string& run = layout->run_id;
  layout->fabric_bridge = "ts" + run + "fb";
  layout->nodes.clear();
  for (size_t k = 0; k < s.nodes.size(); ++k) {
    const std::string n = std::to_string(k);
    layout->nodes.push_back(
        {s.nodes[k].name, "ts" + run + "b" + n, "ts" + run + "n" + n + "u",
         "ts" + run + "n" + n + "f", NodeSliceName(run, static_cast<int>(k)),
         s.nodes[k].nic_mbit});
  }
  layout->node_name = layout->nodes[0].name;
  layout->bridge = layout->nodes[0].bridge;
  for (const Job& job : s.jobs) {
    std::vector<SimPod*> pods;
    std::vector<std::string> names;
    std::vector<PodRole> roles;
    std::vector<int> indexes;
    for (SimPod& p : layout->pods) {
      if (p.job != &job) continue;
      pods.push_back(&p);
      names.push_back(p.name);
      roles.push_back(p.role);
      indexes.push_back(p.index);
    }
    const std::vector<int> nodes = NodesOfJob(s, job, names, roles, indexes);
    for (size_t i = 0; i < pods.size(); ++i) {
      pods[i]->node = nodes[i];
      pods[i]->cgroup_parent = layout->nodes[nodes[i]].cgroup_parent + "/";
    }
  }
}

}  // namespace trainsim
