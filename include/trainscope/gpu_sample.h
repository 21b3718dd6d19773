#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace trainscope {

// One GPU as NVML reports it. Optional fields stay empty where the device
// answers NOT_SUPPORTED.
struct GpuDeviceSample {
  unsigned index = 0;
  std::string uuid;
  std::string model_name;
  std::optional<double> gpu_utilization_ratio;
  std::optional<double> memory_utilization_ratio;
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<double> power_watts;
  std::optional<double> temperature_celsius;
  std::optional<double> sm_clock_hertz;
  std::optional<double> pcie_transmit_bytes_per_second;
  std::optional<double> pcie_receive_bytes_per_second;
};

// What one pod's processes use on one GPU.
struct GpuPodUsage {
  std::string pod_uid;
  std::string container;  // container name, "" when unknown
  unsigned gpu_index = 0;
  uint64_t memory_used_bytes = 0;
  std::optional<double> utilization_ratio;
};

}  // namespace trainscope
