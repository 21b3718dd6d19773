#include "gpu/nvml_library.h"

#include <dlfcn.h>
#include <spdlog/spdlog.h>

#include <utility>

namespace trainscope {
namespace {

template <typename Fn>
void Resolve(void* handle, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, symbol));
}

// The functions every supported driver has; without one NVML is unusable.
// Returns the names of those missing ("" when all are there).
std::string ResolveRequired(void* h, NvmlFunctions& fn) {
  struct Required {
    const char* symbol;
    bool found;
  };
  Resolve(h, "nvmlInit_v2", fn.Init);
  Resolve(h, "nvmlShutdown", fn.Shutdown);
  Resolve(h, "nvmlErrorString", fn.ErrorString);
  Resolve(h, "nvmlDeviceGetCount_v2", fn.DeviceGetCount);
  Resolve(h, "nvmlDeviceGetHandleByIndex_v2", fn.DeviceGetHandleByIndex);
  Resolve(h, "nvmlDeviceGetUUID", fn.DeviceGetUUID);
  Resolve(h, "nvmlDeviceGetName", fn.DeviceGetName);
  Resolve(h, "nvmlDeviceGetUtilizationRates", fn.DeviceGetUtilizationRates);
  Resolve(h, "nvmlDeviceGetMemoryInfo", fn.DeviceGetMemoryInfo);
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
  Resolve(h, "nvmlDeviceGetMemoryInfo_v2", fn.DeviceGetMemoryInfoV2);
  Resolve(h, "nvmlDeviceGetPowerUsage", fn.DeviceGetPowerUsage);
  Resolve(h, "nvmlDeviceGetTemperature", fn.DeviceGetTemperature);
  Resolve(h, "nvmlDeviceGetClockInfo", fn.DeviceGetClockInfo);
  Resolve(h, "nvmlDeviceGetPcieThroughput", fn.DeviceGetPcieThroughput);
  Resolve(h, "nvmlDeviceGetComputeRunningProcesses_v3",
          fn.DeviceGetComputeRunningProcesses);
  if (!fn.DeviceGetComputeRunningProcesses) {
    // Drivers before r470 export only _v2, which fills the same struct.
    Resolve(h, "nvmlDeviceGetComputeRunningProcesses_v2",
            fn.DeviceGetComputeRunningProcesses);
  }
  Resolve(h, "nvmlDeviceGetProcessUtilization", fn.DeviceGetProcessUtilization);
  Resolve(h, "nvmlDeviceGetFieldValues", fn.DeviceGetFieldValues);
  Resolve(h, "nvmlEventSetCreate", fn.EventSetCreate);
  Resolve(h, "nvmlDeviceRegisterEvents", fn.DeviceRegisterEvents);
  Resolve(h, "nvmlEventSetWait_v2", fn.EventSetWait);
  Resolve(h, "nvmlEventSetFree", fn.EventSetFree);
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

void NvmlLibrary::DlCloser::operator()(void* handle) const {
  if (handle != nullptr) dlclose(handle);
}

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
  // RTLD_LOCAL keeps NVML's symbols out of the global namespace, so a
  // second copy (tests load a fake and its variants) never binds to the
  // first one's functions.
  DlHandle handle(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!handle) {
    const char* why = dlerror();
    return {nullptr, Status::NoData("NVML library " + path + " not loadable (" +
                                    (why ? why : "unknown dlopen error") +
                                    "); no NVIDIA driver on this node?")};
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
