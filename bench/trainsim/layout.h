#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "scenario.h"

namespace trainsim {

// Everything trainsim names for one pod. Derived only from the scenario and
// the run id, so every process of a run (supervisor, pod processes,
// cleanup) computes the same names without sharing state.
struct SimPod {
  const Job* job = nullptr;
  PodRole role = PodRole::kPs;
  int index = 0;         // replica index within its role
  int global_index = 0;  // position among all pods of the scenario
  std::string name;
  std::string uid;           // a UUID whose first group is the run id
  std::string container_id;  // 64 hex
  std::string ip;            // 198.18.0.0/15
  std::string netns;         // trainsim-<run>-<pod>
  std::string host_veth;     // ts<run>h<n>: the bridge side
  std::string peer_veth;     // ts<run>p<n>: renamed eth0 inside the netns
  Resources resources;       // before faults
  int node = 0;              // index into Layout::nodes
  // "" on a single node; in a cluster the node's own slice
  // ("trainsim-<run>-node<k>.slice/"), under which kubepods.slice lives.
  std::string cgroup_parent;
};

// One simulated node's kernel objects (cluster.cc names them).
struct SimNodeInfo {
  std::string name;    // spec.nodeName, the agent's --node-name
  std::string bridge;  // where its pods' veths hang
  // Cluster only: the uplink veth pair from the node bridge to the fabric
  // bridge. `uplink` is the node's NIC as its agent sees it (rx = download).
  std::string uplink;      // ts<run>n<k>u, on the node bridge
  std::string fabric_end;  // ts<run>n<k>f, on the fabric bridge
  std::string cgroup_parent;
  double nic_mbit = 0;  // 0: not shaped
};

struct Layout {
  std::string run_id;
  std::string node_name;  // trainsim-<run>
  std::string bridge;     // ts<run>br
  std::vector<SimPod> pods;
  // One entry (node_name, bridge) for a single-node scenario; one per
  // declared node for a cluster, which also has a fabric bridge.
  std::vector<SimNodeInfo> nodes;
  std::string fabric_bridge;  // ts<run>fb; "" on a single node

  bool cluster() const { return !fabric_bridge.empty(); }
  const SimNodeInfo& NodeOf(const SimPod& pod) const { return nodes[pod.node]; }

  const SimPod* Find(const std::string& pod_name) const;
  const SimPod* FindByIp(const std::string& ip) const;
};

inline constexpr int kPrefixLen = 15;
// Second group of every trainsim pod uid: <run>-7531-4xxx-axxx-xxxxxxxxxxxx.
inline constexpr const char* kUidMarker =
    "7531";  // the pods' subnet, 198.18.0.0/15

// FNV-1a of `s` from `seed`: names and layouts derived from the scenario
// and run id alone, identical in every process of a run.
uint64_t Fnv1a(const std::string& s, uint64_t seed);

// A run id is 8 lowercase hex digits: it fits interface names (IFNAMSIZ)
// and doubles as the first group of the pods' UUIDs.
bool ValidRunId(const std::string& run_id);
std::string NewRunId();

// Pods ordered job by job, PS before workers. `scenario` must outlive it.
Layout MakeLayout(const Scenario& scenario, const std::string& run_id);

// The pod uid as kubelet writes it in cgroup names (dashes to underscores).
std::string UnderscoredUid(const std::string& uid);

}  // namespace trainsim
