#pragma once

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
};

struct Layout {
  std::string run_id;
  std::string node_name;  // trainsim-<run>
  std::string bridge;     // ts<run>br
  std::vector<SimPod> pods;

  const SimPod* Find(const std::string& pod_name) const;
  const SimPod* FindByIp(const std::string& ip) const;
};

inline constexpr int kPrefixLen = 15;
// Second group of every trainsim pod uid: <run>-7531-4xxx-axxx-xxxxxxxxxxxx.
inline constexpr const char* kUidMarker =
    "7531";  // the pods' subnet, 198.18.0.0/15

// A run id is 8 lowercase hex digits: it fits interface names (IFNAMSIZ)
// and doubles as the first group of the pods' UUIDs.
bool ValidRunId(const std::string& run_id);
std::string NewRunId();

// Pods ordered job by job, PS before workers. `scenario` must outlive it.
Layout MakeLayout(const Scenario& scenario, const std::string& run_id);

// The pod uid as kubelet writes it in cgroup names (dashes to underscores).
std::string UnderscoredUid(const std::string& uid);

}  // namespace trainsim
