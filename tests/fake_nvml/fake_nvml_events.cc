// The fake's XID event API: an event set hands out, in order, the XIDs that
// the config lists for a device beyond those it had when it was registered.

#include <algorithm>
#include <memory>
#include <mutex>
#include <type_traits>

#include "fake_nvml_state.h"

using fake_nvml::Refresh;
using fake_nvml::S;
using fake_nvml::State;

namespace {

bool ValidSet(const State& s, nvmlEventSet_t set) {
  return std::any_of(s.event_sets.begin(), s.event_sets.end(),
                     [&](const auto& p) { return p.get() == set; });
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  s.event_sets.push_back(std::make_unique<nvmlEventSet_st>());
  *set = s.event_sets.back().get();
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(
    nvmlDevice_t device, unsigned long long eventTypes, nvmlEventSet_t set) {
  LOCKED_DEVICE(device);
  if (!ValidSet(s, set)) return NVML_ERROR_INVALID_ARGUMENT;
  if (!dev->xid_supported ||
      (eventTypes &
       ~static_cast<unsigned long long>(nvmlEventTypeXidCriticalError)) != 0) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  // NVML reports only events that happen after registration.
  set->delivered[device->index] = dev->xid_events.size();
  return NVML_SUCCESS;
}

// Never blocks: with nothing queued it answers TIMEOUT at once, whatever
// timeoutms says (the collector only ever waits 0 ms).
FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set,
                                                  nvmlEventData_t* data,
                                                  unsigned int timeoutms) {
  (void)timeoutms;
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  if (!ValidSet(s, set) || data == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  Refresh(s, false);
  for (auto& [index, delivered] : set->delivered) {
    if (index >= s.devices.size()) continue;
    const auto& events = s.devices[index].xid_events;
    if (delivered >= events.size()) continue;
    data->device = &s.slots[index];
    data->eventType = nvmlEventTypeXidCriticalError;
    data->eventData = events[delivered++];
    data->gpuInstanceId = 0xFFFFFFFFu;
    data->computeInstanceId = 0xFFFFFFFFu;
    return NVML_SUCCESS;
  }
  return NVML_ERROR_TIMEOUT;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  State& s = S();
  std::lock_guard<std::mutex> lock(s.mu);
  if (s.init_count == 0) return NVML_ERROR_UNINITIALIZED;
  auto it = std::find_if(s.event_sets.begin(), s.event_sets.end(),
                         [&](const auto& p) { return p.get() == set; });
  if (it == s.event_sets.end()) return NVML_ERROR_INVALID_ARGUMENT;
  s.event_sets.erase(it);
  return NVML_SUCCESS;
}

static_assert(
    std::is_same_v<decltype(&nvmlEventSetCreate), nvmlEventSetCreate_fn>);
static_assert(std::is_same_v<decltype(&nvmlDeviceRegisterEvents),
                             nvmlDeviceRegisterEvents_fn>);
static_assert(
    std::is_same_v<decltype(&nvmlEventSetWait_v2), nvmlEventSetWait_v2_fn>);
static_assert(std::is_same_v<decltype(&nvmlEventSetFree), nvmlEventSetFree_fn>);
