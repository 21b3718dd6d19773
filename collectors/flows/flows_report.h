#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace trainscope {

// What the flows collector knows beyond Snapshot::peer_traffic: its own
// health counters and payload bytes. Handed to the exporter through a
// FlowsBoard because Snapshot has no slot for it.
struct FlowsReport {
  uint64_t sequence = 0;  // snapshot this report was produced for
  std::string mode;       // "ebpf" or "pcap" (after a fallback: "pcap")
  std::optional<uint64_t> map_entries;
  std::optional<uint64_t> map_capacity;
  std::optional<uint64_t> map_evictions_total;
  std::optional<uint64_t> map_insert_failures_total;
  std::optional<uint64_t> pcap_kernel_drops_total;
  std::optional<uint64_t> pcap_interface_drops_total;
  uint64_t unattributed_bytes_total = 0;
  // (pod uid, peer uid or "") -> payload bytes (IP and TCP/UDP headers
  // removed), receive and transmit: what iperf3 and applications count.
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>>
      payload_bytes;
};

// Latest report, shared between the collector (writer) and the exporter.
class FlowsBoard {
 public:
  // The agent's board: one flows collector per process.
  static std::shared_ptr<FlowsBoard> Default();
  void Publish(std::shared_ptr<const FlowsReport> report) {
    std::lock_guard lock(mu_);
    latest_ = std::move(report);
  }
  std::shared_ptr<const FlowsReport> Latest() const {
    std::lock_guard lock(mu_);
    return latest_;
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const FlowsReport> latest_;
};

}  // namespace trainscope
