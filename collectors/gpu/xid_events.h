#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>

#include "gpu/nvml_library.h"

namespace trainscope {

// XID errors counted from NVML's event API. NVML only reports events that
// happen after a device is registered, and keeps them queued until read, so
// draining the queue once per cycle (wait with a 0 ms timeout) counts every
// XID without a thread of its own.
class XidWatcher {
 public:
  struct Counts {
    uint64_t total = 0;
    uint64_t last_xid = 0;  // meaningful once total > 0
  };

  // Creates the event set; inactive when the library lacks the event API.
  explicit XidWatcher(const NvmlLibrary& nvml);
  ~XidWatcher();
  XidWatcher(const XidWatcher&) = delete;
  XidWatcher& operator=(const XidWatcher&) = delete;

  // Registers device `index` for XID events, once. Devices that answer
  // NOT_SUPPORTED (consumer boards, some vGPUs) stay unregistered.
  void Register(nvmlDevice_t device, unsigned index);
  // Reads every queued event.
  void Drain();
  // Counts since registration; nullopt for unregistered devices.
  std::optional<Counts> CountsFor(unsigned index) const;

 private:
  const NvmlLibrary& nvml_;
  nvmlEventSet_t set_ = nullptr;
  std::map<nvmlDevice_t, unsigned> registered_;  // handle -> index
  std::set<unsigned> unsupported_;
  std::map<unsigned, Counts> counts_;
  bool warned_ = false;
};

}  // namespace trainscope
