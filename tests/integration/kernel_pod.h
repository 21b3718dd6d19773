#pragma once

#include <sys/types.h>

#include <filesystem>
#include <string>
#include <vector>

namespace trainscope::testing {

// A kubelet-style pod cgroup (systemd driver, Burstable, containerd leaf)
// created in every mounted hierarchy of the real kernel, with processes in
// it. Everything it created is removed by the destructor, innermost first,
// after its processes are killed, so a failing test leaves nothing behind.
class KernelPod {
 public:
  KernelPod();
  ~KernelPod();
  KernelPod(const KernelPod&) = delete;
  KernelPod& operator=(const KernelPod&) = delete;

  const std::string& uid() const { return uid_; }
  const std::string& container_id() const { return container_id_; }
  // Relative path of the pod (and container) cgroup in every hierarchy.
  std::string pod_path() const;
  std::string container_path() const;

  void SetCpuLimit(double cores);
  void SetMemoryLimit(uint64_t bytes);
  // Forks a child that burns CPU / holds `bytes` of touched anonymous
  // memory, and moves it into the container cgroup of every hierarchy.
  pid_t StartBusyLoop();
  pid_t StartMemoryHolder(uint64_t bytes);
  // Moves an existing process into the container cgroup of every hierarchy
  // without taking ownership: the caller still stops it.
  void MoveIn(pid_t pid) const;

  // The kernel's own numbers for the pod cgroup.
  double KernelCpuSeconds() const;
  uint64_t KernelMemoryUsageBytes() const;
  uint64_t KernelInactiveFileBytes() const;

  // Where the hierarchies are (v2 mount and the v1 controllers in use).
  static std::filesystem::path Unified();
  static std::vector<std::filesystem::path> V1Controllers();

 private:
  pid_t Adopt(pid_t pid);
  std::filesystem::path In(const std::filesystem::path& hierarchy,
                           const std::string& rel) const;

  std::string uid_;
  std::string container_id_;
  std::vector<std::filesystem::path> created_;  // in creation order
  std::vector<pid_t> children_;
};

}  // namespace trainscope::testing
