#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gpu/nvml_api.h"
#include "gpu/nvml_library.h"
#include "trainscope/gpu_sample.h"

namespace trainscope {

// One compute process on a GPU, as NVML sees it (host PID namespace).
struct GpuProcess {
  unsigned pid = 0;
  std::optional<uint64_t> memory_bytes;  // empty: NVML_VALUE_NOT_AVAILABLE
  std::optional<double> sm_ratio;        // empty: no per-process utilization
};

// What the reader keeps between cycles for one device index.
struct DeviceMemo {
  std::string uuid;  // last known, to name a device that is lost
  unsigned long long last_seen_timestamp = 0;  // process utilization samples
  unsigned process_capacity = 16;
  unsigned sample_capacity = 16;
};

struct DeviceRead {
  nvmlDevice_t handle = nullptr;
  bool lost = false;
  // Why the device is missing from the cycle (lost, or no handle).
  std::string error;
  // Non-fatal failures of single reads (the value stays empty).
  std::vector<std::string> warnings;
  std::optional<GpuDeviceSample> sample;
  std::vector<GpuProcess> processes;
};

// Reads every value of device `index`. NOT_SUPPORTED leaves a value empty;
// GPU_IS_LOST from any call abandons the device (lost = true, no sample).
DeviceRead ReadDevice(const NvmlLibrary& nvml, unsigned index,
                      DeviceMemo& memo);

}  // namespace trainscope
