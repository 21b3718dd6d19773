#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "trainscope/status.h"

namespace trainscope {

// The cgroup v2 hierarchy the BPF programs attach to.
struct Cgroup2Target {
  std::filesystem::path root;    // the v2 mount
  std::filesystem::path attach;  // kubepods(.slice) below it, else the root
  // Depth of `root` below the real v2 mount: --cgroup2-path may name a
  // subtree (say, one node's slice of a simulated cluster), and the BPF
  // ancestor levels count from the mount.
  uint32_t root_level = 0;
};

// `override_path` (--cgroup2-path) wins; otherwise <cgroup_root> on a pure
// v2 host or <cgroup_root>/unified on a hybrid one. Fails unless the
// directory really is a cgroup2 mount (statfs), with the reason.
Status LocateCgroup2(const std::filesystem::path& cgroup_root,
                     const std::filesystem::path& override_path,
                     Cgroup2Target* out);

// Pod cgroups of the v2 hierarchy: cgroup id (the directory's inode number,
// what bpf_skb_ancestor_cgroup_id returns) -> uid and depth below the root.
struct PodCgroupId {
  std::string uid;
  uint32_t level = 0;
};
std::map<uint64_t, PodCgroupId> ScanPodCgroupIds(
    const std::filesystem::path& v2_root);

// Number of path components of `relative` ("a/b/c" -> 3).
uint32_t CgroupLevel(const std::filesystem::path& relative);

}  // namespace trainscope
