#pragma once

#include <sys/stat.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>

#include "bpf_common/cgroup2.h"
#include "flows/bpf_loader.h"
#include "kernel_pod.h"

namespace trainscope::testing {

// Two Burstable kernel pods for tests that drive PeerFlowsBpf directly:
// their cgroup ids (0 when a cgroup is missing), their depth below the v2
// root, and the programs attached to the top of their hierarchy.
struct BpfPodPair {
  static uint64_t CgroupId(const std::filesystem::path& dir) {
    struct stat st {};
    return ::stat(dir.c_str(), &st) == 0 ? st.st_ino : 0;
  }

  KernelPod a, b;
  const uint64_t a_id = CgroupId(KernelPod::Unified() / a.pod_path());
  const uint64_t b_id = CgroupId(KernelPod::Unified() / b.pod_path());
  const uint32_t depth = CgroupLevel(a.pod_path());
  const std::filesystem::path attach =
      KernelPod::Unified() /
      std::filesystem::path(a.pod_path()).begin()->string();

  bool found() const { return a_id != 0 && b_id != 0; }
  // The pod table that knows both.
  std::map<uint64_t, uint32_t> both() const {
    return {{a_id, depth}, {b_id, depth}};
  }
  // The programs on `attach`, 1024 flow entries; null with *error set.
  std::unique_ptr<PeerFlowsBpf> Attach(uint64_t burst_gap_ns,
                                       Status* error) const {
    return PeerFlowsBpf::Attach(attach, 1024, burst_gap_ns, error);
  }
};

}  // namespace trainscope::testing
