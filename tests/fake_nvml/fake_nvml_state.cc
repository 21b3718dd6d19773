#include "fake_nvml_state.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>

namespace fake_nvml {

State& S() {
  static State state;
  return state;
}

namespace {

template <typename T>
std::optional<T> Opt(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->get<T>();
}

std::vector<FakeDevice> ParseDevices(const nlohmann::json& root) {
  std::vector<FakeDevice> out;
  for (const auto& d : root.value("devices", nlohmann::json::array())) {
    FakeDevice dev;
    dev.uuid = d.value("uuid", "GPU-fake-" + std::to_string(out.size()));
    dev.name = d.value("name", "Fake NVIDIA GPU");
    dev.lost = d.value("lost", false);
    dev.utilization_gpu = Opt<unsigned>(d, "utilization_gpu");
    dev.utilization_memory = Opt<unsigned>(d, "utilization_memory");
    dev.memory_total = Opt<unsigned long long>(d, "memory_total");
    dev.memory_used = Opt<unsigned long long>(d, "memory_used");
    dev.memory_reserved = d.value("memory_reserved", 0ULL);
    dev.power_mw = Opt<unsigned>(d, "power_mw");
    dev.temperature = Opt<unsigned>(d, "temperature");
    dev.sm_clock_mhz = Opt<unsigned>(d, "sm_clock_mhz");
    dev.pcie_tx_kbps = Opt<unsigned>(d, "pcie_tx_kbps");
    dev.pcie_rx_kbps = Opt<unsigned>(d, "pcie_rx_kbps");
    dev.ecc_sbe_volatile = Opt<unsigned long long>(d, "ecc_sbe_volatile");
    dev.ecc_dbe_volatile = Opt<unsigned long long>(d, "ecc_dbe_volatile");
    dev.retired_sbe = Opt<unsigned long long>(d, "retired_pages_sbe");
    dev.retired_dbe = Opt<unsigned long long>(d, "retired_pages_dbe");
    dev.pcie_replay = Opt<unsigned long long>(d, "pcie_replay");
    dev.process_utilization_supported =
        d.value("process_utilization_supported", true);
    dev.xid_supported = d.value("xid_supported", true);
    dev.xid_events = d.value("xid_events", std::vector<unsigned long long>{});
    for (const auto& p : d.value("processes", nlohmann::json::array())) {
      FakeProcess proc;
      proc.pid = p.at("pid").get<unsigned>();
      proc.used_memory = Opt<unsigned long long>(p, "used_memory");
      proc.sm_util = p.value("sm_util", 0u);
      dev.processes.push_back(proc);
    }
    out.push_back(std::move(dev));
    if (out.size() == kMaxDevices) break;
  }
  return out;
}

}  // namespace

void Refresh(State& s, bool force) {
  const char* path = std::getenv("TRAINSCOPE_FAKE_NVML_CONFIG");
  if (path == nullptr || *path == '\0') {
    s.devices.clear();
    return;
  }
  struct stat st {};
  if (stat(path, &st) != 0) {
    s.devices.clear();
    s.loaded_size = -1;
    return;
  }
  bool changed = s.loaded_path != path || st.st_size != s.loaded_size ||
                 st.st_mtim.tv_sec != s.loaded_mtime.tv_sec ||
                 st.st_mtim.tv_nsec != s.loaded_mtime.tv_nsec;
  if (!force && !changed) return;
  std::ifstream in(path);
  nlohmann::json root = nlohmann::json::parse(in, nullptr, false);
  if (root.is_discarded() || !root.is_object()) {
    std::fprintf(stderr, "fake_nvml: %s is not valid JSON; keeping devices\n",
                 path);
    return;
  }
  try {
    s.devices = ParseDevices(root);
    s.init_result = root.value("init_result", static_cast<int>(NVML_SUCCESS));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake_nvml: %s: %s; keeping devices\n", path,
                 e.what());
    return;
  }
  s.loaded_path = path;
  s.loaded_mtime = st.st_mtim;
  s.loaded_size = st.st_size;
}

nvmlReturn_t Device(State& s, nvmlDevice_t handle, const FakeDevice** dev) {
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  Refresh(s, false);
  const auto* base = &s.slots[0];
  if (handle < base || handle >= base + kMaxDevices) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (handle->index >= s.devices.size()) return NVML_ERROR_GPU_IS_LOST;
  *dev = &s.devices[handle->index];
  if ((*dev)->lost) return NVML_ERROR_GPU_IS_LOST;
  return NVML_SUCCESS;
}

unsigned long long NowMicros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace fake_nvml
