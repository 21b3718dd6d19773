#include "cluster_spec.h"

#include <algorithm>
#include <cmath>

namespace trainsim {
namespace {

using nlohmann::json;

[[noreturn]] void Fail(const std::string& path, const std::string& problem) {
  throw ScenarioError(path + ": " + problem);
}

const std::pair<const char*, NodeLayout> kLayouts[] = {
    {"ps_with_workers", NodeLayout::kPsWithWorkers},
    {"ps_isolated", NodeLayout::kPsIsolated},
    {"spread", NodeLayout::kSpread},
    {"random", NodeLayout::kRandom}};

// RFC 1123 label: what a Kubernetes node name (and the agent's pod name
// trainscope-agent-<node>) must be. Short, so interface-free names stay
// readable in logs.
bool ValidNodeName(const std::string& name) {
  if (name.empty() || name.size() > 40) return false;
  for (char c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-'))
      return false;
  return name.front() != '-' && name.back() != '-';
}

std::string Index(const std::string& key, size_t i) {
  return key + "[" + std::to_string(i) + "]";
}

}  // namespace

std::string_view NodeLayoutName(NodeLayout layout) {
  for (const auto& [name, v] : kLayouts)
    if (v == layout) return name;
  return "?";
}

void ParseJobClusterKey(const std::string& key, const json& value,
                        const std::string& path, Job* job) {
  if (key == "layout") {
    if (!value.is_string()) Fail(path, "must be a string");
    const std::string text = value.get<std::string>();
    std::string names;
    for (const auto& [name, v] : kLayouts) {
      if (text == name) {
        job->layout = v;
        return;
      }
      names += names.empty() ? name : std::string(", ") + name;
    }
    Fail(path, "unknown layout \"" + text + "\" (one of: " + names + ")");
  }
  if (key == "ps_nodes" || key == "seed") {
    if (!value.is_number_integer() || value.get<int64_t>() < 0)
      Fail(path, "must be a non-negative integer, got " + value.dump());
    if (key == "ps_nodes") {
      if (value.get<int64_t>() < 1) Fail(path, "must be >= 1");
      job->ps_nodes =
          static_cast<int>(std::min<int64_t>(value.get<int64_t>(), 1 << 20));
    } else {
      job->layout_seed = value.get<uint64_t>();
    }
    return;
  }
  if (key == "pod_nodes") {
    if (!value.is_object()) Fail(path, "must be an object {pod: node}");
    for (const auto& [pod, node] : value.items()) {
      if (!node.is_string())
        Fail(path + "." + pod, "must be a node name, got " + node.dump());
      job->pod_nodes[pod] = node.get<std::string>();
    }
    return;
  }
  Fail(path, "unknown field");
}

std::vector<NodeSpec> ParseNodes(const json& value) {
  if (!value.is_array() || value.empty())
    Fail("nodes", "must be a non-empty array");
  // Node bridges and uplinks are numbered; keep names within IFNAMSIZ.
  if (value.size() > 64) Fail("nodes", "at most 64 nodes");
  std::vector<NodeSpec> nodes;
  std::set<std::string> names;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string path = Index("nodes", i);
    const json& n = value[i];
    if (!n.is_object()) Fail(path, "must be an object");
    NodeSpec spec;
    for (const auto& [key, v] : n.items()) {
      if (key == "name") {
        if (!v.is_string()) Fail(path + ".name", "must be a string");
        spec.name = v.get<std::string>();
      } else if (key == "nic_mbit") {
        if (!v.is_number() || !std::isfinite(v.get<double>()) ||
            v.get<double>() <= 0)
          Fail(path + ".nic_mbit", "must be a number > 0, got " + v.dump());
        spec.nic_mbit = v.get<double>();
      } else if (key != "description" && !key.starts_with("_")) {
        Fail(path + "." + key, "unknown field");
      }
    }
    if (spec.name.empty()) Fail(path + ".name", "is required");
    if (!ValidNodeName(spec.name))
      Fail(path + ".name", "\"" + spec.name +
                               "\" is not a node name (lowercase letters, "
                               "digits and '-', at most 40)");
    if (!names.insert(spec.name).second)
      Fail(path + ".name", "duplicate node name \"" + spec.name + "\"");
    nodes.push_back(spec);
  }
  return nodes;
}

void ValidateCluster(const Scenario& s, const std::set<std::string>& pods) {
  std::set<std::string> nodes;
  for (const NodeSpec& n : s.nodes) nodes.insert(n.name);
  const bool cluster = !s.nodes.empty();
  for (size_t i = 0; i < s.jobs.size(); ++i) {
    const Job& job = s.jobs[i];
    const std::string path = Index("jobs", i);
    if (!cluster) {
      if (job.layout) Fail(path + ".layout", "needs a top-level `nodes` list");
      if (!job.pod_nodes.empty())
        Fail(path + ".pod_nodes", "needs a top-level `nodes` list");
      if (job.ps_nodes) Fail(path + ".ps_nodes", "needs a top-level `nodes`");
      continue;
    }
    if (!job.layout)
      Fail(path + ".layout",
           "is required when the scenario declares nodes (ps_with_workers, "
           "ps_isolated, spread or random)");
    const bool isolated = *job.layout == NodeLayout::kPsIsolated;
    if (isolated && job.ps_nodes == 0)
      Fail(path + ".ps_nodes", "is required with layout ps_isolated");
    if (!isolated && job.ps_nodes)
      Fail(path + ".ps_nodes", "only applies to layout ps_isolated");
    if (isolated && job.ps_nodes >= static_cast<int>(s.nodes.size()))
      Fail(path + ".ps_nodes", "must be < the node count (" +
                                   std::to_string(s.nodes.size()) +
                                   ") so the workers have a node of their own");
    if (job.layout_seed && *job.layout != NodeLayout::kRandom)
      Fail(path + ".seed", "only applies to layout random");
    for (const auto& [pod, node] : job.pod_nodes) {
      const std::string where = path + ".pod_nodes." + pod;
      const std::string prefix = job.name + "-";
      if (!pods.count(pod) || pod.rfind(prefix, 0) != 0)
        Fail(where, "no pod named \"" + pod + "\" in job " + job.name);
      if (!nodes.count(node)) Fail(where, "no node named \"" + node + "\"");
    }
  }
  for (size_t i = 0; i < s.faults.size(); ++i) {
    const Fault& f = s.faults[i];
    if (f.kind != FaultKind::kNodeBandwidthLimit) continue;
    if (!cluster)
      Fail(Index("faults", i) + ".kind",
           "node_bandwidth_limit needs a top-level `nodes` list");
    if (!nodes.count(f.node))
      Fail(Index("faults", i) + ".node", "no node named \"" + f.node + "\"");
  }
  for (const char* key : {"expect", "allow"}) {
    const auto& list = std::string(key) == "expect" ? s.expect : s.allow;
    for (size_t i = 0; i < list.size(); ++i) {
      if (list[i].node.empty()) continue;
      if (!cluster)
        Fail(Index(key, i) + ".node", "needs a top-level `nodes` list");
      if (!nodes.count(list[i].node))
        Fail(Index(key, i) + ".node", "no node named \"" + list[i].node + "\"");
    }
  }
}

}  // namespace trainsim
