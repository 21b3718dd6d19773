#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "trainscope/host_paths.h"
#include "trainscope/pod.h"
#include "trainscope/unique_fd.h"

namespace trainscope::cycle_bench {

// The files whose contents change each cycle, each kept open and rewritten
// in place with ftruncate + pwrite: the same inode, as a kernel file, and
// no openat/write/close between the cycles' syscall markers (the writes
// happen outside them) that the count would have to tell from the agent's.
class CounterFiles {
 public:
  // Throws std::runtime_error when the file cannot be opened or written.
  void Write(const std::filesystem::path& path, const std::string& text);
  size_t size() const { return files_.size(); }

 private:
  std::map<std::string, UniqueFd> files_;
};

// A synthetic node on disk: a pure cgroup v2 tree laid out as the kubelet's
// systemd driver with containerd makes it (kubepods.slice/.../
// kubepods-burstable-pod<uid>.slice/cri-containerd-<id>.scope, the file
// formats of tests/fixtures/hosts/v2-systemd) and the /proc and /sys files
// the cgroup, procnet and node collectors read. Pods are 1 PS + 9 workers
// per training job; each has a "tensorflow" container (a process with
// kThreadsPerProcess threads) and a pause sandbox. The tree lives in a fresh
// temporary directory that the destructor removes.
class SyntheticNode {
 public:
  static constexpr int kThreadsPerProcess = 16;

  // Writes the whole tree; throws std::runtime_error when it cannot.
  explicit SyntheticNode(int pods);
  ~SyntheticNode();
  SyntheticNode(const SyntheticNode&) = delete;
  SyntheticNode& operator=(const SyntheticNode&) = delete;

  const HostPaths& host() const { return host_; }
  // The pods as discovery would list them (labels, containers, limits).
  const PodList& pods() const { return pods_; }
  // Rewrites every counter a collector reads as it would have grown by the
  // next sample (CPU, memory, IO, PSI, network, node CPU), so no cache in
  // the agent can answer from a previous cycle's bytes.
  void Advance();

 private:
  struct Pod {
    PodInfo info;
    std::filesystem::path cgroup;     // absolute pod cgroup directory
    std::filesystem::path container;  // the tensorflow leaf
    std::filesystem::path pause;      // the sandbox leaf
    int pid = 0;                      // tensorflow process; pause is pid + 1
  };

  void WriteNodeFiles();
  void WritePod(int index);
  void WriteCounters(const Pod& pod, int index);
  void WriteProcess(int pid, int threads, const std::string& netns,
                    const std::filesystem::path& cgroup);

  std::filesystem::path root_;
  HostPaths host_;
  CounterFiles counters_;
  PodList pods_;
  std::vector<Pod> layout_;
  int tick_ = 0;  // Advance() calls so far
};

}  // namespace trainscope::cycle_bench
