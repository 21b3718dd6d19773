#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace trainscope {

// The flows collector's own state at this sample: which source it uses and
// how healthy it is. Counters are cumulative; a value the active source
// does not have (map counters in pcap mode, drops in eBPF mode) is empty.
// Stored in Snapshot::parts; absent when no flows source ran this cycle
// (flows off, or none usable).
struct FlowsSample {
  std::string mode;  // "ebpf" or "pcap" (also after a fallback)
  std::optional<uint64_t> map_entries;
  std::optional<uint64_t> map_max_entries;
  std::optional<uint64_t> map_evictions_total;
  std::optional<uint64_t> map_insert_failures_total;
  std::optional<uint64_t> pcap_kernel_drops_total;
  std::optional<uint64_t> pcap_interface_drops_total;
  // Exchange bursts the kernel could not hand over (ring buffer full).
  std::optional<uint64_t> burst_events_lost_total;
  // Bytes of a pod cgroup or address the pod table does not (yet) know.
  uint64_t unattributed_bytes_total = 0;
};

}  // namespace trainscope
