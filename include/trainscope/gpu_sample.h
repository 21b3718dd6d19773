#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace trainscope {

// One GPU as NVML reports it. Optional fields stay empty where the device
// answers NOT_SUPPORTED (or the driver lacks the call), so the exporter
// leaves the series out instead of inventing a 0.
struct GpuDeviceSample {
  unsigned index = 0;  // NVML index, dcgm-exporter's `gpu` label
  std::string uuid;
  std::string model_name;
  std::optional<double> gpu_utilization_ratio;     // 0..1
  std::optional<double> memory_utilization_ratio;  // 0..1
  std::optional<uint64_t> memory_used_bytes;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<double> power_watts;
  std::optional<double> temperature_celsius;
  std::optional<double> sm_clock_hertz;
  std::optional<double> pcie_transmit_bytes_per_second;
  std::optional<double> pcie_receive_bytes_per_second;
  // Volatile ECC error counts (since the driver last loaded): single-bit
  // (corrected) and double-bit (uncorrected).
  std::optional<uint64_t> ecc_corrected_errors;
  std::optional<uint64_t> ecc_uncorrected_errors;
  std::optional<uint64_t> pcie_replays;
  // Pages retired for ECC errors (persistent across reboots).
  std::optional<uint64_t> retired_pages_single_bit;
  std::optional<uint64_t> retired_pages_double_bit;
  // XID errors (driver-reported GPU faults) seen since the agent registered
  // for them, and the code of the latest; empty without the event API.
  std::optional<uint64_t> xid_errors;
  std::optional<uint64_t> last_xid;
  // Compute processes on the device, whether or not they map to a pod.
  std::optional<unsigned> process_count;
};

// What one container's processes use on one GPU.
struct GpuPodUsage {
  std::string pod_uid;
  std::string container;  // container name; the short runtime id when the
                          // pod spec does not list it; "" when unknown
  unsigned gpu_index = 0;
  std::string gpu_uuid;
  // Empty when NVML could not tell the memory of any of the processes.
  std::optional<uint64_t> memory_used_bytes;
  // Sum of the processes' SM utilization, capped at 1. Empty where the
  // device has no per-process utilization.
  std::optional<double> utilization_ratio;
  unsigned processes = 0;
};

}  // namespace trainscope
