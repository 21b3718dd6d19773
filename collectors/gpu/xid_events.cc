#include "gpu/xid_events.h"

#include <spdlog/spdlog.h>

namespace trainscope {
namespace {

// Bounds one drain, should a broken driver report events without end.
constexpr int kMaxEventsPerDrain = 4096;

}  // namespace

XidWatcher::XidWatcher(const NvmlLibrary& nvml) : nvml_(nvml) {
  const auto& fn = nvml_.fn();
  if (!fn.EventSetCreate) return;
  nvmlReturn_t r = fn.EventSetCreate(&set_);
  if (r != NVML_SUCCESS) {
    set_ = nullptr;
    spdlog::warn("[gpu] XID counters off: {}",
                 nvml_.Describe("nvmlEventSetCreate", r));
  }
}

XidWatcher::~XidWatcher() {
  if (set_ != nullptr) nvml_.fn().EventSetFree(set_);
}

void XidWatcher::Register(nvmlDevice_t device, unsigned index) {
  if (set_ == nullptr || registered_.count(device) ||
      unsupported_.count(index)) {
    return;
  }
  nvmlReturn_t r = nvml_.fn().DeviceRegisterEvents(
      device, nvmlEventTypeXidCriticalError, set_);
  if (r == NVML_SUCCESS) {
    registered_[device] = index;
    counts_.try_emplace(index);
    return;
  }
  unsupported_.insert(index);
  if (r != NVML_ERROR_NOT_SUPPORTED) {
    spdlog::warn("[gpu] GPU {}: XID counter off: {}", index,
                 nvml_.Describe("nvmlDeviceRegisterEvents", r));
  }
}

void XidWatcher::Drain() {
  if (set_ == nullptr || registered_.empty()) return;
  for (int i = 0; i < kMaxEventsPerDrain; ++i) {
    nvmlEventData_t data{};
    nvmlReturn_t r = nvml_.fn().EventSetWait(set_, &data, 0);
    if (r == NVML_ERROR_TIMEOUT) return;  // queue empty
    if (r != NVML_SUCCESS) {
      if (!warned_) {
        spdlog::warn("[gpu] {}", nvml_.Describe("nvmlEventSetWait_v2", r));
        warned_ = true;
      }
      return;
    }
    if (!(data.eventType & nvmlEventTypeXidCriticalError)) continue;
    auto it = registered_.find(data.device);
    if (it == registered_.end()) continue;
    Counts& c = counts_[it->second];
    ++c.total;
    c.last_xid = data.eventData;
    spdlog::warn("[gpu] GPU {} reported XID {}", it->second, data.eventData);
  }
}

std::optional<XidWatcher::Counts> XidWatcher::CountsFor(unsigned index) const {
  auto it = counts_.find(index);
  if (it == counts_.end()) return std::nullopt;
  return it->second;
}

}  // namespace trainscope
