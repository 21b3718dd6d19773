#pragma once

// State shared by the fake NVML's entry points (fake_nvml.cc,
// fake_nvml_events.cc): the devices of the JSON config and the handles.

#include <sys/types.h>

#include <ctime>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpu/nvml_api.h"

#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

// nvml_api.h leaves the handles opaque. A device handle is a slot of
// State::slots, so it stays valid across config reloads.
struct nvmlDevice_st {
  unsigned index;
};

struct nvmlEventSet_st {
  std::map<unsigned, size_t> delivered;  // device index -> XIDs handed out
};

namespace fake_nvml {

constexpr unsigned kMaxDevices = 64;

struct FakeProcess {
  unsigned pid = 0;
  std::optional<unsigned long long> used_memory;
  unsigned sm_util = 0;
};

struct FakeDevice {
  std::string uuid;
  std::string name;
  bool lost = false;
  std::optional<unsigned> utilization_gpu, utilization_memory;
  // memory_used: what applications use (nvidia-smi's "used", _v2's
  // `used`); the driver reserves memory_reserved on top, which the v1
  // call's `used` includes.
  std::optional<unsigned long long> memory_total, memory_used;
  unsigned long long memory_reserved = 0;
  std::optional<unsigned> power_mw, temperature, sm_clock_mhz;
  std::optional<unsigned> pcie_tx_kbps, pcie_rx_kbps;
  std::optional<unsigned long long> ecc_sbe_volatile, ecc_dbe_volatile;
  std::optional<unsigned long long> retired_sbe, retired_dbe, pcie_replay;
  bool process_utilization_supported = true;
  std::vector<FakeProcess> processes;
  bool xid_supported = true;
  // Every XID the device ever raised, oldest first; an event set delivers
  // the ones appended after it registered the device.
  std::vector<unsigned long long> xid_events;
};

struct State {
  std::mutex mu;
  int init_count = 0;
  std::vector<FakeDevice> devices;
  int init_result = NVML_SUCCESS;
  std::string loaded_path;
  struct timespec loaded_mtime = {};
  off_t loaded_size = -1;
  nvmlDevice_st slots[kMaxDevices];
  std::vector<std::unique_ptr<nvmlEventSet_st>> event_sets;
  State() {
    for (unsigned i = 0; i < kMaxDevices; ++i) slots[i].index = i;
  }
};

State& S();

// Re-reads the config when forced or when its mtime or size changed. A file
// caught half-written keeps the previous devices.
void Refresh(State& s, bool force);

// Common preamble of every device call: initialized, handle valid, device
// present and not lost. Returns SUCCESS with *dev set, or the error.
nvmlReturn_t Device(State& s, nvmlDevice_t handle, const FakeDevice** dev);

unsigned long long NowMicros();

#define LOCKED_DEVICE(handle)                                \
  ::fake_nvml::State& s = ::fake_nvml::S();                  \
  std::lock_guard<std::mutex> lock(s.mu);                    \
  const ::fake_nvml::FakeDevice* dev = nullptr;              \
  if (nvmlReturn_t r = ::fake_nvml::Device(s, handle, &dev); \
      r != NVML_SUCCESS)                                     \
  return r

}  // namespace fake_nvml
