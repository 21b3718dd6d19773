#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "flows/burst.h"
#include "flows/flow_record.h"
#include "flows/pcap_parse.h"

namespace trainscope {

// Directional 5-tuple of a captured packet.
struct Endpoints {
  IpAddress src;
  IpAddress dst;
  uint16_t src_port = 0;
  uint16_t dst_port = 0;
  uint8_t protocol = 0;
  auto operator<=>(const Endpoints&) const = default;
};

// Offline view of a capture: one row per conversation, A being the side
// that sent the first packet seen (usually the connection's opener).
struct Conversation {
  Endpoints a_to_b;
  uint64_t frames_a_to_b = 0, frame_bytes_a_to_b = 0, ip_bytes_a_to_b = 0;
  uint64_t frames_b_to_a = 0, frame_bytes_b_to_a = 0, ip_bytes_b_to_a = 0;
};

class ConversationTable {
 public:
  void Add(const ParsedPacket& packet);
  // In order of first appearance.
  const std::vector<Conversation>& conversations() const { return rows_; }

 private:
  std::map<Endpoints, size_t> index_;  // both directions -> row
  std::vector<Conversation> rows_;
};

// Live capture bookkeeping: turns packets into per-local-pod flow deltas.
// With "any" (or several interfaces) one packet is seen on every interface
// it crosses (pod veth, bridge, NIC); each directional flow is counted only
// on the first interface it was seen on.
class PacketAccounting {
 public:
  // `burst_gap_s` 0 turns exchange-burst tracking off.
  explicit PacketAccounting(size_t max_flows = 65536, double burst_gap_s = 0)
      : max_flows_(max_flows), bursts_(burst_gap_s) {}

  // Local pods by address; replaced each cycle.
  void SetLocalPods(std::map<IpAddress, std::string> local);
  // `ifindex` identifies the capture (SLL2's ifindex, or the handle's own
  // number for single-interface captures).
  void Add(const ParsedPacket& packet, int ifindex);
  // Deltas since the last call; LocalPodRef carries the local address.
  std::vector<FlowDelta> TakeDeltas();
  // Exchange bursts finished by `now_s` (the capture clock, epoch seconds).
  std::vector<BurstEvent> TakeBursts(double now_s) {
    return bursts_.Take(now_s);
  }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t not_local() const { return not_local_; }

 private:
  void Count(const IpAddress& local, const IpAddress& peer, uint16_t lport,
             uint16_t pport, uint8_t proto, FlowDirection dir,
             const ParsedPacket& p);

  size_t max_flows_;
  std::map<IpAddress, std::string> local_;
  std::map<Endpoints, int> first_ifindex_;
  std::map<FlowKey, FlowCounters> pending_;
  BurstDetector bursts_;
  uint64_t duplicates_ = 0;
  uint64_t not_local_ = 0;
};

}  // namespace trainscope
