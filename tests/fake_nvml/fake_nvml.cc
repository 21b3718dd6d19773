// A stand-in for libnvidia-ml.so.1 for tests and trainsim: the NVML symbols
// Trainscope uses, with NVML's signatures and documented return codes, over
// devices described in the JSON file named by TRAINSCOPE_FAKE_NVML_CONFIG
// (format in docs/gpu.md). The file is re-read whenever it changes, so a test
// or trainsim can add processes or lose a GPU while the agent runs.

#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>

#include "fake_nvml_state.h"

using fake_nvml::NowMicros;
using fake_nvml::Refresh;
using fake_nvml::S;
using fake_nvml::State;

namespace {

nvmlReturn_t CopyString(const std::string& value, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (value.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, value.c_str(), value.size() + 1);
  return NVML_SUCCESS;
}

template <typename T>
nvmlReturn_t Scalar(const std::optional<T>& v, unsigned* out) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!v) return NVML_ERROR_NOT_SUPPORTED;
  *out = static_cast<unsigned>(*v);
  return NVML_SUCCESS;
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  Refresh(s, true);
  if (s.init_result != NVML_SUCCESS) {
    return static_cast<nvmlReturn_t>(s.init_result);
  }
  ++s.init_count;  // NVML reference-counts init/shutdown pairs
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  --s.init_count;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_ALREADY_INITIALIZED:
      return "Already Initialized";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_INSUFFICIENT_POWER:
      return "Insufficient External Power";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_LIBRARY_NOT_FOUND:
      return "NVML Shared Library Not Found";
    case NVML_ERROR_FUNCTION_NOT_FOUND:
      return "Function Not Found";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_NO_DATA:
      return "No data";
    default:
      return "Unknown Error";
  }
}

#ifndef FAKE_NVML_OMIT_DEVICE_GET_COUNT
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  Refresh(s, true);
  *count = static_cast<unsigned>(s.devices.size());
  return NVML_SUCCESS;
}
#endif

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  Refresh(s, true);
  if (device == nullptr || index >= s.devices.size()) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *device = &s.slots[index];
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                unsigned int length) {
  LOCKED_DEVICE(device);
  return CopyString(dev->uuid, uuid, length);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                unsigned int length) {
  LOCKED_DEVICE(device);
  return CopyString(dev->name, name, length);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUtilizationRates(
    nvmlDevice_t device, nvmlUtilization_t* utilization) {
  LOCKED_DEVICE(device);
  if (utilization == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!dev->utilization_gpu || !dev->utilization_memory) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  utilization->gpu = *dev->utilization_gpu;
  utilization->memory = *dev->utilization_memory;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t device,
                                                      nvmlMemory_t* memory) {
  LOCKED_DEVICE(device);
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!dev->memory_total || !dev->memory_used) return NVML_ERROR_NOT_SUPPORTED;
  memory->total = *dev->memory_total;
  memory->used = *dev->memory_used + dev->memory_reserved;
  memory->free =
      memory->total > memory->used ? memory->total - memory->used : 0;
  return NVML_SUCCESS;
}

// A versioned struct (a wrong version is refused). `used` leaves
// `reserved` out, as a real H100 with driver 580 answered (nvml.h says
// otherwise; the v1 call above counts it in).
FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t* memory) {
  LOCKED_DEVICE(device);
  if (memory == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (memory->version != nvmlMemory_v2) {
    return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
  }
  if (!dev->memory_total || !dev->memory_used) return NVML_ERROR_NOT_SUPPORTED;
  memory->total = *dev->memory_total;
  memory->reserved = dev->memory_reserved;
  memory->used = *dev->memory_used;
  const unsigned long long taken = memory->used + memory->reserved;
  memory->free = memory->total > taken ? memory->total - taken : 0;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device,
                                                      unsigned int* power) {
  LOCKED_DEVICE(device);
  return Scalar(dev->power_mw, power);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTemperature(
    nvmlDevice_t device, nvmlTemperatureSensors_t sensor, unsigned int* temp) {
  LOCKED_DEVICE(device);
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  return Scalar(dev->temperature, temp);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device,
                                                     nvmlClockType_t type,
                                                     unsigned int* clock) {
  LOCKED_DEVICE(device);
  if (type > NVML_CLOCK_VIDEO) return NVML_ERROR_INVALID_ARGUMENT;
  if (type != NVML_CLOCK_SM) return NVML_ERROR_NOT_SUPPORTED;
  return Scalar(dev->sm_clock_mhz, clock);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPcieThroughput(
    nvmlDevice_t device, nvmlPcieUtilCounter_t counter, unsigned int* value) {
  LOCKED_DEVICE(device);
  if (counter == NVML_PCIE_UTIL_TX_BYTES)
    return Scalar(dev->pcie_tx_kbps, value);
  if (counter == NVML_PCIE_UTIL_RX_BYTES)
    return Scalar(dev->pcie_rx_kbps, value);
  return NVML_ERROR_INVALID_ARGUMENT;
}

// NVML's size protocol: a count smaller than needed (including the 0/NULL
// query) answers INSUFFICIENT_SIZE with the needed count written back.
FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(
    nvmlDevice_t device, unsigned int* infoCount, nvmlProcessInfo_t* infos) {
  LOCKED_DEVICE(device);
  if (infoCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto have = static_cast<unsigned>(dev->processes.size());
  if (*infoCount < have || (infos == nullptr && have > 0)) {
    *infoCount = have;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < have; ++i) {
    const auto& p = dev->processes[i];
    infos[i].pid = p.pid;
    infos[i].usedGpuMemory = p.used_memory.value_or(NVML_VALUE_NOT_AVAILABLE);
    infos[i].gpuInstanceId = 0xFFFFFFFFu;
    infos[i].computeInstanceId = 0xFFFFFFFFu;
  }
  *infoCount = have;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetProcessUtilization(
    nvmlDevice_t device, nvmlProcessUtilizationSample_t* utilization,
    unsigned int* processSamplesCount, unsigned long long lastSeenTimeStamp) {
  LOCKED_DEVICE(device);
  if (processSamplesCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (!dev->process_utilization_supported) return NVML_ERROR_NOT_SUPPORTED;
  // One fresh sample per process per call, stamped now: every sample is
  // newer than any timestamp a caller saw before.
  const unsigned long long now = NowMicros();
  if (now <= lastSeenTimeStamp || dev->processes.empty()) {
    return NVML_ERROR_NOT_FOUND;
  }
  const auto have = static_cast<unsigned>(dev->processes.size());
  if (utilization == nullptr || *processSamplesCount < have) {
    *processSamplesCount = have;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; i < have; ++i) {
    utilization[i] = {
        dev->processes[i].pid, now, dev->processes[i].sm_util, 0, 0, 0};
  }
  *processSamplesCount = have;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(
    nvmlDevice_t device, int valuesCount, nvmlFieldValue_t* values) {
  LOCKED_DEVICE(device);
  if (values == nullptr || valuesCount < 0) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < valuesCount; ++i) {
    nvmlFieldValue_t& f = values[i];
    std::optional<unsigned long long> v;
    switch (f.fieldId) {
      case NVML_FI_DEV_ECC_SBE_VOL_TOTAL:
        v = dev->ecc_sbe_volatile;
        break;
      case NVML_FI_DEV_ECC_DBE_VOL_TOTAL:
        v = dev->ecc_dbe_volatile;
        break;
      case NVML_FI_DEV_RETIRED_SBE:
        v = dev->retired_sbe;
        break;
      case NVML_FI_DEV_RETIRED_DBE:
        v = dev->retired_dbe;
        break;
      case NVML_FI_DEV_PCIE_REPLAY_COUNTER:
        v = dev->pcie_replay;
        break;
      default:
        break;
    }
    f.timestamp = static_cast<long long>(NowMicros());
    f.latencyUsec = 0;
    f.nvmlReturn = v ? NVML_SUCCESS : NVML_ERROR_NOT_SUPPORTED;
    f.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    f.value.ullVal = v.value_or(0);
  }
  return NVML_SUCCESS;
}

// The exported functions must have exactly the types the collector casts
// dlsym's result to.
static_assert(std::is_same_v<decltype(&nvmlInit_v2), nvmlInit_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlShutdown), nvmlShutdown_fn>);
static_assert(std::is_same_v<decltype(&nvmlErrorString), nvmlErrorString_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetHandleByIndex_v2),
                             nvmlDeviceGetHandleByIndex_v2_fn>);
static_assert(
    std::is_same_v<decltype(&nvmlDeviceGetUUID), nvmlDeviceGetUUID_fn>);
static_assert(
    std::is_same_v<decltype(&nvmlDeviceGetName), nvmlDeviceGetName_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetUtilizationRates),
                             nvmlDeviceGetUtilizationRates_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetMemoryInfo),
                             nvmlDeviceGetMemoryInfo_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetMemoryInfo_v2),
                             nvmlDeviceGetMemoryInfo_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetPowerUsage),
                             nvmlDeviceGetPowerUsage_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetTemperature),
                             nvmlDeviceGetTemperature_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetClockInfo),
                             nvmlDeviceGetClockInfo_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetPcieThroughput),
                             nvmlDeviceGetPcieThroughput_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetComputeRunningProcesses_v3),
                             nvmlDeviceGetComputeRunningProcesses_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetProcessUtilization),
                             nvmlDeviceGetProcessUtilization_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceGetFieldValues),
                             nvmlDeviceGetFieldValues_fn>);
