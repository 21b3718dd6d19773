#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace trainscope {

// An IPv4 or IPv6 address as 16 bytes; IPv4 is stored v4-mapped
// (::ffff:a.b.c.d), as the BPF program writes it, so one type covers both.
struct IpAddress {
  std::array<uint8_t, 16> bytes{};

  static IpAddress V4(uint32_t network_order);
  static IpAddress V4(const uint8_t (&octets)[4]);
  static IpAddress V6(const uint8_t* sixteen);
  static std::optional<IpAddress> Parse(std::string_view text);

  bool is_v4() const;
  bool is_unspecified() const;
  std::string ToString() const;

  auto operator<=>(const IpAddress&) const = default;
};

enum class FlowDirection : uint8_t { kReceive = 0, kTransmit = 1 };

// Counters of one flow, cumulative as the source reports them.
struct FlowCounters {
  uint64_t bytes = 0;          // IP-level: IP header and everything after it
  uint64_t payload_bytes = 0;  // minus IP and TCP/UDP headers
  uint64_t packets = 0;

  FlowCounters& operator+=(const FlowCounters& o) {
    bytes += o.bytes;
    payload_bytes += o.payload_bytes;
    packets += o.packets;
    return *this;
  }
  bool operator==(const FlowCounters&) const = default;
};

// Which pod a flow belongs to on this node: eBPF knows the pod's cgroup,
// pcap only sees the pod's address.
struct LocalPodRef {
  uint64_t cgroup_id = 0;  // pod cgroup v2 inode; 0 when unknown
  IpAddress address;       // used when cgroup_id is 0

  auto operator<=>(const LocalPodRef&) const = default;
};

// One flow as seen from a local pod: direction is the byte direction from
// that pod's point of view, whoever opened the connection.
struct FlowKey {
  LocalPodRef pod;
  IpAddress peer;
  uint16_t local_port = 0;
  uint16_t peer_port = 0;
  FlowDirection direction = FlowDirection::kReceive;
  uint8_t protocol = 0;

  auto operator<=>(const FlowKey&) const = default;
};

struct FlowDelta {
  FlowKey key;
  FlowCounters counters;
};

}  // namespace trainscope
