#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace trainscope {

// The cgroup hierarchies mounted under a cgroup root. A pure v2 host has only
// `unified` (the root itself); a hybrid host (systemd's default on older
// distributions, and the machines here) has v1 controllers plus a v2 tree at
// <root>/unified; a pure v1 host has only `v1`.
struct CgroupHierarchies {
  std::optional<std::filesystem::path> unified;
  // controller name ("cpu", "cpuacct", "memory", "blkio", "pids", ...) ->
  // mount directory; co-mounted controllers ("cpu,cpuacct") appear once per
  // controller, pointing at the same directory.
  std::map<std::string, std::filesystem::path> v1;
  // Controllers the unified root offers (its cgroup.controllers): none on a
  // hybrid host, where they are all bound to v1. A controller's files
  // (memory.*, io.stat, cpu.max) exist below only when it is listed here.
  std::set<std::string> unified_controllers;

  bool operator==(const CgroupHierarchies&) const = default;
};

CgroupHierarchies DetectHierarchies(const std::filesystem::path& cgroup_root);

struct ContainerCgroup {
  std::string id;       // runtime id (64 hex for containerd/CRI-O/docker)
  std::string runtime;  // "containerd", "cri-o", "docker", "" (cgroupfs leaf)
  // Relative to the hierarchy root, no leading '/': root / relative_path.
  std::string relative_path;
};

struct PodCgroup {
  std::string uid;            // with dashes, as the API server spells it
  std::string qos;            // "guaranteed", "burstable", "besteffort"
  std::string relative_path;  // as ContainerCgroup::relative_path
  std::vector<ContainerCgroup> containers;
};

// "pod<uid>" (cgroupfs driver) or "kubepods[-<qos>]-pod<uid_underscored>.slice"
// (systemd driver) -> uid with dashes.
std::optional<std::string> PodUidFromDirName(std::string_view name);
// "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope" or a
// bare 64-hex "<id>" (cgroupfs driver). conmon scopes are not containers.
std::optional<ContainerCgroup> ContainerFromDirName(std::string_view name);

// Finds every pod cgroup below a hierarchy root by the tail of its path (so a
// custom kubelet cgroup root still works). Unreadable directories are skipped.
std::vector<PodCgroup> ScanPodCgroups(const std::filesystem::path& hierarchy);

// Pods of all hierarchies, merged by uid (on hybrid and v1 hosts the same pod
// shows up in several trees).
std::vector<PodCgroup> ScanPodCgroups(const CgroupHierarchies& hierarchies);

}  // namespace trainscope
