#include "gpu/nvml_library.h"

#include <spdlog/spdlog.h>

#include <utility>

namespace trainscope {
namespace {

// The functions every supported driver has; without one NVML is unusable.
// Returns the names of those missing ("" when all are there).
std::string ResolveRequired(void* h, NvmlFunctions& fn) {
  struct Required {
    const char* symbol;
    bool found;
  };
  DlResolve(h, "nvmlInit_v2", fn.Init);
  DlResolve(h, "nvmlShutdown", fn.Shutdown);
  DlResolve(h, "nvmlErrorString", fn.ErrorString);
  DlResolve(h, "nvmlDeviceGetCount_v2", fn.DeviceGetCount);
  DlResolve(h, "nvmlDeviceGetHandleByIndex_v2", fn.DeviceGetHandleByIndex);
  DlResolve(h, "nvmlDeviceGetUUID", fn.DeviceGetUUID);
  DlResolve(h, "nvmlDeviceGetName", fn.DeviceGetName);
  DlResolve(h, "nvmlDeviceGetUtilizationRates", fn.DeviceGetUtilizationRates);
  DlResolve(h, "nvmlDeviceGetMemoryInfo", fn.DeviceGetMemoryInfo);
  const Required required[] = {
      {"nvmlInit_v2", fn.Init != nullptr},
      {"nvmlShutdown", fn.Shutdown != nullptr},
      {"nvmlErrorString", fn.ErrorString != nullptr},
      {"nvmlDeviceGetCount_v2", fn.DeviceGetCount != nullptr},
      {"nvmlDeviceGetHandleByIndex_v2", fn.DeviceGetHandleByIndex != nullptr},
      {"nvmlDeviceGetUUID", fn.DeviceGetUUID != nullptr},
      {"nvmlDeviceGetName", fn.DeviceGetName != nullptr},
      {"nvmlDeviceGetUtilizationRates",
       fn.DeviceGetUtilizationRates != nullptr},
      {"nvmlDeviceGetMemoryInfo", fn.DeviceGetMemoryInfo != nullptr},
  };
  std::string missing;
  for (const auto& r : required) {
    if (r.found) continue;
    if (!missing.empty()) missing += ", ";
    missing += r.symbol;
  }
  return missing;
}

// Functions newer drivers add; each one missing turns off only its metric.
void ResolveOptional(void* h, const std::string& path, NvmlFunctions& fn) {
  DlResolve(h, "nvmlDeviceGetMemoryInfo_v2", fn.DeviceGetMemoryInfoV2);
  DlResolve(h, "nvmlDeviceGetPowerUsage", fn.DeviceGetPowerUsage);
  DlResolve(h, "nvmlDeviceGetTemperature", fn.DeviceGetTemperature);
  DlResolve(h, "nvmlDeviceGetClockInfo", fn.DeviceGetClockInfo);
  DlResolve(h, "nvmlDeviceGetPcieThroughput", fn.DeviceGetPcieThroughput);
  DlResolve(h, "nvmlDeviceGetComputeRunningProcesses_v3",
            fn.DeviceGetComputeRunningProcesses);
  if (!fn.DeviceGetComputeRunningProcesses) {
    // Drivers before r470 export only _v2, which fills the same struct.
    DlResolve(h, "nvmlDeviceGetComputeRunningProcesses_v2",
              fn.DeviceGetComputeRunningProcesses);
  }
  DlResolve(h, "nvmlDeviceGetProcessUtilization",
            fn.DeviceGetProcessUtilization);
  DlResolve(h, "nvmlDeviceGetFieldValues", fn.DeviceGetFieldValues);
  DlResolve(h, "nvmlEventSetCreate", fn.EventSetCreate);
  DlResolve(h, "nvmlDeviceRegisterEvents", fn.DeviceRegisterEvents);
  DlResolve(h, "nvmlEventSetWait_v2", fn.EventSetWait);
  DlResolve(h, "nvmlEventSetFree", fn.EventSetFree);
  if (!fn.EventSetCreate || !fn.DeviceRegisterEvents || !fn.EventSetWait ||
      !fn.EventSetFree) {
    fn.EventSetCreate = nullptr;
    fn.DeviceRegisterEvents = nullptr;
    fn.EventSetWait = nullptr;
    fn.EventSetFree = nullptr;
  }
  if (!fn.DeviceGetComputeRunningProcesses) {
    spdlog::info(
        "[gpu] {} has no nvmlDeviceGetComputeRunningProcesses_v3/_v2: "
        "per-pod GPU usage off",
        path);
  }
}

// nvmlInit_v2. A library without a loaded kernel driver is a CPU node with
// the user-space part installed: nothing to collect (NoData), not a failure.
Status Initialize(const NvmlFunctions& fn, const std::string& path) {
  nvmlReturn_t r = fn.Init();
  if (r == NVML_SUCCESS) return Status::Ok();
  std::string why = "nvmlInit_v2: ";
  const char* text = fn.ErrorString(r);
  why += text ? text : "unknown NVML error";
  why += " (" + std::to_string(static_cast<int>(r)) + ") from " + path;
  if (r == NVML_ERROR_DRIVER_NOT_LOADED || r == NVML_ERROR_LIBRARY_NOT_FOUND) {
    return Status::NoData(why);
  }
  return Status::Error(why);
}

}  // namespace

NvmlLibrary::NvmlLibrary(DlHandle handle, std::string path, NvmlFunctions fn)
    : handle_(std::move(handle)), path_(std::move(path)), fn_(fn) {}

NvmlLibrary::~NvmlLibrary() {
  nvmlReturn_t r = fn_.Shutdown();
  if (r != NVML_SUCCESS) {
    spdlog::warn("[gpu] {}", Describe("nvmlShutdown", r));
  }
}

std::string NvmlLibrary::Describe(const char* call, nvmlReturn_t result) const {
  const char* text = fn_.ErrorString ? fn_.ErrorString(result) : nullptr;
  return std::string(call) + ": " + (text ? text : "unknown NVML error") +
         " (" + std::to_string(static_cast<int>(result)) + ")";
}

NvmlLibrary::OpenResult NvmlLibrary::Open(const std::string& path) {
  std::string why;
  DlHandle handle = DlOpen(path, &why);
  if (!handle) {
    return {nullptr, Status::NoData("NVML library " + path + " not loadable (" +
                                    why + "); no NVIDIA driver on this node?")};
  }
  NvmlFunctions fn;
  if (std::string missing = ResolveRequired(handle.get(), fn);
      !missing.empty()) {
    return {nullptr, Status::Error("NVML library " + path +
                                   " lacks required symbol(s) " + missing +
                                   "; driver too old or not NVML")};
  }
  ResolveOptional(handle.get(), path, fn);
  if (Status init = Initialize(fn, path); !init.ok()) return {nullptr, init};
  return {std::unique_ptr<NvmlLibrary>(
              new NvmlLibrary(std::move(handle), path, fn)),
          Status::Ok()};
}

}  // namespace trainscope
