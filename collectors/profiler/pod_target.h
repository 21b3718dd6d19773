#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "trainscope/pod.h"
#include "trainscope/status.h"

namespace trainscope::profiler {

// The cgroup v2 side of one pod: what the BPF filter matches and how a
// sample's cgroup names its container.
struct PodTarget {
  std::filesystem::path pod_dir;     // the pod's cgroup v2 directory
  std::vector<uint64_t> cgroup_ids;  // pod cgroup and every one below
  std::vector<uint32_t> pod_levels;  // depth of the pod cgroup below root
  std::map<uint64_t, std::string> container_of;  // cgroup id -> container
  std::vector<std::filesystem::path> dirs;       // for cgroup.procs
};

// Finds `pod`'s cgroup under the v2 hierarchy (`v2_root`, `root_level` deep
// below the real mount). NotFound-style errors say what was looked for.
Status ResolvePodTarget(const std::filesystem::path& v2_root,
                        uint32_t root_level, const PodInfo& pod,
                        PodTarget* out);

}  // namespace trainscope::profiler
namespace trainscope {
struct PodCgroup;  // kube/pod_cgroups.h
}  // namespace trainscope
namespace trainscope::profiler {

// The same from a pod cgroup already found by ScanPodCgroups (one scan of
// the hierarchy for many pods).
void PodTargetFrom(const std::filesystem::path& v2_root, uint32_t root_level,
                   const PodInfo& pod, const trainscope::PodCgroup& found,
                   PodTarget* out);

// Thread-group ids of every process in the target's cgroups now.
std::vector<uint32_t> TargetProcesses(const PodTarget& target);

}  // namespace trainscope::profiler
