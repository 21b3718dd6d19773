#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "flows/pcap_flows.h"
#include "trainscope/status.h"

typedef struct pcap pcap_t;

namespace trainscope {

struct PcapOptions {
  std::vector<std::string> interfaces;  // empty: the physical NICs
  std::vector<uint16_t> ports = {2222};
  int buffer_bytes = 32 << 20;
  int snaplen = 160;  // headers only: SLL2 + IPv6/IPv4 options + TCP options
  double burst_gap_s = 0;  // exchange bursts (0: off)
};

// "(tcp or udp) and (port 2222 or port 2223)": both directions, so bytes of
// connections the training pod opened (receiver pull) are captured too.
std::string TrainingPortFilter(const std::vector<uint16_t>& ports);

// Interfaces with a backing device under <sys>/class/net (not lo, veth,
// bridges or tunnels).
std::vector<std::string> PhysicalInterfaces(const std::filesystem::path& sys);

// Live capture on a few interfaces with one background thread. Packets are
// aggregated as they arrive; the collector takes deltas once per cycle.
class PcapCapture {
 public:
  static std::unique_ptr<PcapCapture> Open(const PcapOptions& options,
                                           const std::filesystem::path& sys,
                                           Status* error);
  ~PcapCapture();
  PcapCapture(const PcapCapture&) = delete;
  PcapCapture& operator=(const PcapCapture&) = delete;

  void SetLocalPods(std::map<IpAddress, std::string> local);
  std::vector<FlowDelta> TakeDeltas();
  // Exchange bursts finished by now (times in epoch seconds).
  std::vector<BurstEvent> TakeBursts();
  // Kernel drops (ring full) and interface drops, summed over the handles
  // still open plus those already closed.
  uint64_t kernel_drops();
  uint64_t interface_drops();
  // Errors of handles that stopped (interface gone); empty while healthy.
  std::string failure() const;
  const std::vector<std::string>& interfaces() const { return names_; }

 private:
  struct Handle;
  PcapCapture() = default;
  void Loop();
  void RefreshStats();

  std::vector<std::unique_ptr<Handle>> handles_;
  std::vector<std::string> names_;
  mutable std::mutex mu_;
  PacketAccounting accounting_;
  std::string failure_;
  uint64_t closed_drops_ = 0, closed_ifdrops_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace trainscope
