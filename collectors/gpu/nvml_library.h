#pragma once

#include <memory>
#include <string>

#include "gpu/nvml_api.h"
#include "trainscope/dl_library.h"
#include "trainscope/status.h"

namespace trainscope {

// Entry points resolved from the NVML library. Required ones are never null
// once NvmlLibrary::Open succeeded; optional ones are null when the driver is
// too old to export them, which turns the matching feature off.
struct NvmlFunctions {
  // Required.
  nvmlInit_v2_fn Init = nullptr;
  nvmlShutdown_fn Shutdown = nullptr;
  nvmlErrorString_fn ErrorString = nullptr;
  nvmlDeviceGetCount_v2_fn DeviceGetCount = nullptr;
  nvmlDeviceGetHandleByIndex_v2_fn DeviceGetHandleByIndex = nullptr;
  nvmlDeviceGetUUID_fn DeviceGetUUID = nullptr;
  nvmlDeviceGetName_fn DeviceGetName = nullptr;
  nvmlDeviceGetUtilizationRates_fn DeviceGetUtilizationRates = nullptr;
  nvmlDeviceGetMemoryInfo_fn DeviceGetMemoryInfo = nullptr;
  // Optional.
  // Preferred when present: the only call that reports reserved memory.
  nvmlDeviceGetMemoryInfo_v2_fn DeviceGetMemoryInfoV2 = nullptr;
  nvmlDeviceGetPowerUsage_fn DeviceGetPowerUsage = nullptr;
  nvmlDeviceGetTemperature_fn DeviceGetTemperature = nullptr;
  nvmlDeviceGetClockInfo_fn DeviceGetClockInfo = nullptr;
  nvmlDeviceGetPcieThroughput_fn DeviceGetPcieThroughput = nullptr;
  // nvmlDeviceGetComputeRunningProcesses_v3, else _v2.
  nvmlDeviceGetComputeRunningProcesses_fn DeviceGetComputeRunningProcesses =
      nullptr;
  nvmlDeviceGetProcessUtilization_fn DeviceGetProcessUtilization = nullptr;
  nvmlDeviceGetFieldValues_fn DeviceGetFieldValues = nullptr;
  // XID events: all four, or none (then all null).
  nvmlEventSetCreate_fn EventSetCreate = nullptr;
  nvmlDeviceRegisterEvents_fn DeviceRegisterEvents = nullptr;
  nvmlEventSetWait_v2_fn EventSetWait = nullptr;
  nvmlEventSetFree_fn EventSetFree = nullptr;
};

// An initialized NVML: the dlopen handle plus one nvmlInit_v2, released
// (nvmlShutdown, then dlclose) when the object dies.
class NvmlLibrary {
 public:
  struct OpenResult {
    std::unique_ptr<NvmlLibrary> library;  // null unless status is ok
    // NoData: no library or no driver here (normal on CPU nodes). Error: a
    // library that is there but unusable (missing symbol, init failure).
    Status status = Status::Ok();
  };

  static OpenResult Open(const std::string& path);

  ~NvmlLibrary();
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;

  const NvmlFunctions& fn() const { return fn_; }
  const std::string& path() const { return path_; }

  // "<call>: <nvmlErrorString> (<code>)"; the one place return codes become
  // text.
  std::string Describe(const char* call, nvmlReturn_t result) const;

 private:
  NvmlLibrary(DlHandle handle, std::string path, NvmlFunctions fn);

  // Declared first so it is destroyed last, after nvmlShutdown ran.
  DlHandle handle_;
  std::string path_;
  NvmlFunctions fn_;
};

}  // namespace trainscope
