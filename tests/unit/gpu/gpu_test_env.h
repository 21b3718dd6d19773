#pragma once

// Fixture pieces shared by the GPU tests: a temp dir holding the fake NVML's
// JSON config and a fixture /proc tree with kubelet-style cgroup files.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "trainscope/host_paths.h"
#include "trainscope/pod.h"

namespace trainscope::gpu_test {

namespace fs = std::filesystem;

// Two pods with containerd ids, in the shapes kubelet writes: one under the
// systemd driver on cgroup v2, one under cgroupfs on v1.
inline constexpr const char* kPodA = "5f1c2d3e-aaaa-4bbb-8ccc-111122223333";
inline constexpr const char* kPodB = "0a9b8c7d-1111-4222-8333-444455556666";
inline const std::string kCtrA(64, 'a');
inline const std::string kCtrB = std::string(63, 'b') + "1";

inline std::string V2SystemdCgroup(const std::string& uid,
                                   const std::string& container) {
  std::string underscored = uid;
  for (char& c : underscored) {
    if (c == '-') c = '_';
  }
  return "0::/kubepods.slice/kubepods-burstable.slice/"
         "kubepods-burstable-pod" +
         underscored + ".slice/cri-containerd-" + container + ".scope\n";
}

inline std::string V1CgroupfsCgroup(const std::string& uid,
                                    const std::string& container) {
  std::string path = "/kubepods/besteffort/pod" + uid + "/" + container;
  return "12:memory:" + path + "\n11:cpu,cpuacct:" + path +
         "\n1:name=systemd:" + path + "\n0::/\n";
}

class GpuEnv : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = fs::path(::testing::TempDir()) /
            ("trainscope_gpu_" + std::string(info->test_suite_name()) + "_" +
             info->name() + "_" + std::to_string(getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_ / "proc");
    host_.proc = root_ / "proc";
    config_ = root_ / "nvml.json";
    setenv("TRAINSCOPE_FAKE_NVML_CONFIG", config_.c_str(), 1);
    pods_ = std::make_shared<PodList>();
  }
  void TearDown() override {
    unsetenv("TRAINSCOPE_FAKE_NVML_CONFIG");
    fs::remove_all(root_);
  }

  // Written to a temp name and renamed, as trainsim does, so the fake never
  // sees half a file.
  void WriteConfig(const nlohmann::json& config) {
    fs::path tmp = config_;
    tmp += ".tmp";
    std::ofstream(tmp) << config.dump();
    fs::rename(tmp, config_);
  }

  void AddProc(unsigned pid, const std::string& cgroup) {
    fs::path dir = host_.proc / std::to_string(pid);
    fs::create_directories(dir);
    std::ofstream(dir / "cgroup") << cgroup;
  }

  void AddPod(const std::string& uid, const std::string& name,
              const std::string& container, const std::string& container_id) {
    PodInfo pod;
    pod.uid = uid;
    pod.namespace_name = "training";
    pod.name = name;
    pod.training_job = "ctr";
    pod.role = Role::kWorker;
    pod.replica_index = static_cast<int>(pods_->size());
    pod.containers.push_back({container, container_id, "containerd"});
    pods_->push_back(pod);
  }

  // A fully supported device with `processes` (JSON array).
  static nlohmann::json Device(int i, nlohmann::json processes = nullptr) {
    return {
        {"uuid", "GPU-0000000" + std::to_string(i) +
                     "-fake-4000-8000-00000000000" + std::to_string(i)},
        {"name", "NVIDIA A100-SXM4-40GB"},
        {"utilization_gpu", 40 + i},
        {"utilization_memory", 10 + i},
        {"memory_total", 42949672960ULL},
        {"memory_used", 1073741824ULL * (i + 1)},
        {"power_mw", 250000 + i},
        {"temperature", 50 + i},
        {"sm_clock_mhz", 1410},
        {"pcie_tx_kbps", 1000},
        {"pcie_rx_kbps", 2000},
        {"ecc_sbe_volatile", 3},
        {"ecc_dbe_volatile", 0},
        {"pcie_replay", 7},
        {"retired_pages_sbe", 1},
        {"retired_pages_dbe", 0},
        {"xid_events", nlohmann::json::array()},
        {"lost", false},
        {"processes",
         processes.is_null() ? nlohmann::json::array() : processes},
    };
  }

  fs::path root_;
  fs::path config_;
  HostPaths host_;
  std::shared_ptr<PodList> pods_;
};

}  // namespace trainscope::gpu_test
