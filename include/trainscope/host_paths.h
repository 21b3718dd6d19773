#pragma once

#include <filesystem>

namespace trainscope {

// Roots of the host file systems the agent reads. Injected everywhere so that
// tests point the same code at fixture trees and the DaemonSet at /host/...
struct HostPaths {
  std::filesystem::path proc = "/proc";
  std::filesystem::path sys = "/sys";
  std::filesystem::path cgroup_root = "/sys/fs/cgroup";
};

}  // namespace trainscope
