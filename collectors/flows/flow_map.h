#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "flows/bpf/peer_flows.h"
#include "flows/burst.h"
#include "flows/flow_record.h"

namespace trainscope {

// Key packing between the BPF map and user space. Pure and symmetric so the
// table-driven tests pin the byte layout both sides rely on.
peer_flow_key PackFlowKey(const FlowKey& key);
FlowKey UnpackFlowKey(const peer_flow_key& raw);

// A finished burst as the program reports it (times in seconds).
BurstEvent UnpackBurstEvent(const peer_burst_event& raw);

// Sums the per-CPU slots of one LRU_PERCPU_HASH value. `stride` is the
// kernel's per-CPU value size (sizeof rounded up to 8).
FlowCounters SumPerCpu(const void* values, size_t cpus, size_t stride);

// Turns cumulative map readings into deltas. The map is an LRU: an entry may
// be evicted and created again between two reads, which shows up as a value
// lower than the last one; the new value is then all new traffic. Entries
// that vanished are forgotten, so memory follows the map's size.
class CounterTracker {
 public:
  std::vector<FlowDelta> Update(
      const std::vector<std::pair<FlowKey, FlowCounters>>& current);
  size_t tracked() const { return last_.size(); }
  // Entries seen again with lower counters (evicted and re-created).
  uint64_t resets() const { return resets_; }

 private:
  std::map<FlowKey, FlowCounters> last_;
  uint64_t resets_ = 0;
};

}  // namespace trainscope
