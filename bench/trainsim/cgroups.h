#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "layout.h"

namespace trainsim {

// One mounted cgroup hierarchy: a v1 controller mount (cpu, memory, ...),
// the hybrid v2 hierarchy (/sys/fs/cgroup/unified), or a pure v2 root.
struct Hierarchy {
  std::string root;
  bool v2 = false;
  std::set<std::string> controllers;  // v1 mount options / v2 controllers
};

// Every hierarchy mounted under `cgroup_mount` (normally /sys/fs/cgroup),
// read from /proc/self/mounts. A pure v2 host yields one entry.
std::vector<Hierarchy> DetectHierarchies(
    const std::string& cgroup_mount = "/sys/fs/cgroup");

// kubelet's systemd-driver path of a Burstable pod and its container.
std::string PodCgroupPath(const SimPod& pod);
std::string ContainerCgroupPath(const SimPod& pod);

// Creates and limits the pods' cgroups in every hierarchy. Removal goes
// through RemoveRunCgroups so a crashed run is cleaned the same way.
class Cgroups {
 public:
  explicit Cgroups(std::vector<Hierarchy> hierarchies);

  // Throws std::runtime_error naming the path on failure.
  void CreatePod(const SimPod& pod);
  void SetCpuLimit(const SimPod& pod, std::optional<double> cores);
  void SetMemoryLimit(const SimPod& pod, std::optional<uint64_t> bytes);
  // Kernel-throttled reads from block device `dev` ("MAJ:MIN", a whole
  // disk): v1 blkio.throttle.read_bps_device, v2 io.max rbps. A throttle
  // is also what makes this kernel account a cgroup's reads.
  void SetReadBps(const SimPod& pod, const std::string& dev,
                  uint64_t bytes_per_s);
  // The same for writes (v1 blkio.throttle.write_bps_device, v2 io.max
  // wbps): a checkpoint fault's disk. v1 throttles direct IO only.
  void SetWriteBps(const SimPod& pod, const std::string& dev,
                   uint64_t bytes_per_s);
  // The kernel's OOM kills in the pod's memory cgroups (pod and container
  // dirs summed): v2 memory.events oom_kill, v1 memory.oom_control
  // oom_kill. The oom fault compares it before and after the pod died.
  uint64_t OomKills(const SimPod& pod) const;
  // The container directories a process of the pod must join.
  std::vector<std::string> ContainerDirs(const SimPod& pod) const;

  const std::vector<Hierarchy>& hierarchies() const { return hierarchies_; }

 private:
  // blkio.throttle.<v1_direction>_bps_device (v1) or io.max <v2_key> (v2).
  void SetIoBps(const SimPod& pod, const std::string& dev, uint64_t bytes_per_s,
                const std::string& v1_direction, const std::string& v2_key);
  std::vector<Hierarchy> hierarchies_;
};

// The run's per-node slices at the root of `h` (cluster runs), or every
// trainsim node slice when run_id is empty.
std::vector<std::string> RunNodeSlices(const Hierarchy& h,
                                       const std::string& run_id);

// Kills every process in the run's pod cgroups and removes them (and the
// kubepods slices when they end up empty). Returns what it could not remove.
std::vector<std::string> RemoveRunCgroups(
    const std::vector<Hierarchy>& hierarchies, const std::string& run_id);

// The whole disk ("MAJ:MIN") holding `path`, "" when it is not on a disk.
std::string BlockDeviceOf(const std::string& path);

// Writes our pid to cgroup.procs of each dir; only system calls, so it is
// safe between fork and exec.
bool JoinCgroups(const std::vector<std::string>& dirs);

}  // namespace trainsim
