#include "flows/pcap_parse.h"

#include <gtest/gtest.h>

#include <vector>

#include "flows/pcap_capture.h"
#include "flows/pcap_flows.h"

namespace trainscope {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes Ipv4Tcp(uint8_t src_last, uint8_t dst_last, uint16_t sport,
              uint16_t dport, uint16_t frag = 0) {
  Bytes ip = {0x45,
              0,
              0,
              0,
              0,
              0,
              static_cast<uint8_t>(frag >> 8),
              static_cast<uint8_t>(frag),
              64,
              6,
              0,
              0,
              198,
              18,
              0,
              src_last,
              198,
              18,
              0,
              dst_last};
  Bytes tcp(20, 0);
  tcp[0] = sport >> 8;
  tcp[1] = sport & 0xff;
  tcp[2] = dport >> 8;
  tcp[3] = dport & 0xff;
  tcp[12] = 8 << 4;  // 32-byte header (timestamps)
  ip.insert(ip.end(), tcp.begin(), tcp.end());
  return ip;
}

Bytes Ipv6Udp(uint16_t sport, uint16_t dport) {
  Bytes ip(40, 0);
  ip[0] = 0x60;
  ip[6] = 17;
  ip[8] = 0xfd;
  ip[23] = 1;  // fd00::1
  ip[24] = 0xfd;
  ip[39] = 2;  // fd00::2
  Bytes udp = {static_cast<uint8_t>(sport >> 8),
               static_cast<uint8_t>(sport),
               static_cast<uint8_t>(dport >> 8),
               static_cast<uint8_t>(dport),
               0,
               8,
               0,
               0};
  ip.insert(ip.end(), udp.begin(), udp.end());
  return ip;
}

Bytes Prepend(Bytes head, const Bytes& tail) {
  head.insert(head.end(), tail.begin(), tail.end());
  return head;
}

Bytes Ether(uint16_t type) {
  Bytes e(12, 0);
  e.push_back(type >> 8);
  e.push_back(type & 0xff);
  return e;
}

Bytes Sll2(uint16_t type, uint32_t ifindex, uint8_t pkttype) {
  Bytes h(20, 0);
  h[0] = type >> 8;
  h[1] = type & 0xff;
  h[4] = ifindex >> 24;
  h[5] = ifindex >> 16;
  h[6] = ifindex >> 8;
  h[7] = ifindex & 0xff;
  h[10] = pkttype;
  return h;
}

TEST(ParsePacket, Table) {
  Bytes vlan = Ether(0x8100);
  vlan.insert(vlan.end(), {0, 5, 0x08, 0x00});
  Bytes sll(16, 0);
  sll[1] = 4;  // outgoing
  sll[14] = 0x08;
  const Bytes full = Ipv4Tcp(1, 2, 3, 4);
  struct Case {
    const char* name;
    int link;
    Bytes data;
    uint32_t wire_len;  // 0: the data's size
    bool ok;
    uint16_t sport, dport;
    uint8_t proto;
    uint32_t ip_bytes, payload;
    int ifindex, pkttype;
  };
  const std::vector<Case> cases = {
      {"ethernet ipv4 tcp", kLinkEthernet,
       Prepend(Ether(0x0800), Ipv4Tcp(1, 2, 40000, 2222)), 1514, true, 40000,
       2222, 6, 1500, 1448, -1, -1},
      {"truncated capture counts the wire length", kLinkEthernet,
       Prepend(Ether(0x0800), Ipv4Tcp(1, 2, 2222, 40000)), 65000, true, 2222,
       40000, 6, 64986, 64934, -1, -1},
      {"vlan tag", kLinkEthernet, Prepend(vlan, Ipv4Tcp(1, 2, 1, 2)), 118, true,
       1, 2, 6, 100, 48, -1, -1},
      {"sll2 carries the ifindex", kLinkLinuxSll2,
       Prepend(Sll2(0x0800, 7, 4), Ipv4Tcp(1, 2, 3, 4)), 120, true, 3, 4, 6,
       100, 48, 7, 4},
      {"sll", kLinkLinuxSll, Prepend(sll, Ipv4Tcp(1, 2, 5, 6)), 116, true, 5, 6,
       6, 100, 48, -1, 4},
      {"raw ipv6 udp", kLinkRaw, Ipv6Udp(53, 5353), 148, true, 53, 5353, 17,
       148, 100, -1, -1},
      {"later fragment has no ports", kLinkRawFile, Ipv4Tcp(1, 2, 9, 9, 0x00b9),
       1500, true, 0, 0, 6, 1500, 1480, -1, -1},
      {"arp is not ip", kLinkEthernet, Prepend(Ether(0x0806), Bytes(28, 0)), 0,
       false},
      {"cut inside the ip header", kLinkEthernet,
       Prepend(Ether(0x0800), Bytes{0x45, 0, 0}), 1500, false},
      {"cut inside the tcp header", kLinkRaw,
       Bytes(full.begin(), full.begin() + 24), 1500, false},
      {"unknown link type", 147, Ipv4Tcp(1, 2, 3, 4), 0, false},
  };
  for (const auto& c : cases) {
    const uint32_t wire = c.wire_len ? c.wire_len : c.data.size();
    auto p = ParsePacket(c.link, c.data.data(), c.data.size(), wire);
    ASSERT_EQ(p.has_value(), c.ok) << c.name;
    if (!p) continue;
    EXPECT_EQ(p->src_port, c.sport) << c.name;
    EXPECT_EQ(p->dst_port, c.dport) << c.name;
    EXPECT_EQ(p->protocol, c.proto) << c.name;
    EXPECT_EQ(p->frame_bytes, wire) << c.name;
    EXPECT_EQ(p->ip_bytes, c.ip_bytes) << c.name;
    EXPECT_EQ(p->payload_bytes, c.payload) << c.name;
    EXPECT_EQ(p->ifindex, c.ifindex) << c.name;
    EXPECT_EQ(p->packet_type, c.pkttype) << c.name;
  }
  auto v4 = ParsePacket(kLinkRaw, Ipv4Tcp(1, 2, 3, 4).data(), 40, 40);
  EXPECT_EQ(v4->src.ToString(), "198.18.0.1");
  EXPECT_EQ(v4->dst.ToString(), "198.18.0.2");
  auto v6 = ParsePacket(kLinkRaw, Ipv6Udp(1, 2).data(), 48, 48);
  EXPECT_EQ(v6->src.ToString(), "fd00::1");
  EXPECT_EQ(v6->dst.ToString(), "fd00::2");
}

ParsedPacket Packet(const char* src, const char* dst, uint16_t sport,
                    uint16_t dport, uint32_t ip_bytes) {
  ParsedPacket p;
  p.src = *IpAddress::Parse(src);
  p.dst = *IpAddress::Parse(dst);
  p.src_port = sport;
  p.dst_port = dport;
  p.protocol = 6;
  p.ip_bytes = ip_bytes;
  p.frame_bytes = ip_bytes + 14;
  p.payload_bytes = ip_bytes - 52;
  return p;
}

TEST(PacketAccounting, CountsEachFlowOnItsFirstInterfaceOnly) {
  PacketAccounting acc;
  const auto a = *IpAddress::Parse("198.18.0.1");
  const auto b = *IpAddress::Parse("198.18.0.2");
  acc.SetLocalPods({{a, "ua"}, {b, "ub"}});
  // a -> b crosses a's veth (3) and b's veth (5); b -> a the other way.
  acc.Add(Packet("198.18.0.1", "198.18.0.2", 40000, 2222, 1000), 3);
  acc.Add(Packet("198.18.0.1", "198.18.0.2", 40000, 2222, 1000), 5);
  acc.Add(Packet("198.18.0.2", "198.18.0.1", 2222, 40000, 100), 5);
  acc.Add(Packet("198.18.0.2", "198.18.0.1", 2222, 40000, 100), 3);
  acc.Add(Packet("203.0.113.1", "203.0.113.2", 2222, 1, 100), 3);
  EXPECT_EQ(acc.duplicates(), 2u);
  EXPECT_EQ(acc.not_local(), 1u);
  auto deltas = acc.TakeDeltas();
  // Both pods are local: each packet counts once per side.
  ASSERT_EQ(deltas.size(), 4u);
  std::map<std::pair<IpAddress, FlowDirection>, uint64_t> bytes;
  for (const auto& d : deltas) {
    EXPECT_EQ(d.key.pod.cgroup_id, 0u);
    bytes[{d.key.pod.address, d.key.direction}] += d.counters.bytes;
  }
  EXPECT_EQ((bytes[{a, FlowDirection::kTransmit}]), 1000u);
  EXPECT_EQ((bytes[{b, FlowDirection::kReceive}]), 1000u);
  EXPECT_EQ((bytes[{b, FlowDirection::kTransmit}]), 100u);
  EXPECT_EQ((bytes[{a, FlowDirection::kReceive}]), 100u);
  EXPECT_TRUE(acc.TakeDeltas().empty());
}

// pcap mode finds exchange bursts from the capture's timestamps: a packet
// seen again on a second interface is not a second burst, pure ACKs are not
// bursts, a silence over the gap ends one.
TEST(PacketAccounting, BurstsFromCaptureTimestamps) {
  PacketAccounting acc(65536, 0.02);
  const auto a = *IpAddress::Parse("198.18.0.1");
  acc.SetLocalPods({{a, "ua"}});
  for (int step = 0; step < 3; ++step) {
    for (int i = 0; i < 10; ++i) {
      ParsedPacket p = Packet("198.18.0.2", "198.18.0.1", 2222, 40000, 1500);
      p.timestamp_s = 100 + step * 0.5 + i * 0.001;
      acc.Add(p, 3);
      acc.Add(p, 5);  // the same packet on the bridge
      ParsedPacket ack = Packet("198.18.0.1", "198.18.0.2", 40000, 2222, 52);
      ack.timestamp_s = p.timestamp_s;
      acc.Add(ack, 3);
    }
  }
  const auto bursts = acc.TakeBursts(101.5);
  ASSERT_EQ(bursts.size(), 3u);
  for (const auto& b : bursts) {
    EXPECT_EQ(b.pod.address, a);
    EXPECT_EQ(b.direction, FlowDirection::kReceive);
    EXPECT_EQ(b.packets, 10u);
    EXPECT_EQ(b.payload_bytes, 10u * (1500 - 52));
  }
  EXPECT_NEAR(bursts[2].start_s - bursts[1].start_s, 0.5, 1e-9);
}

TEST(ConversationTable, FirstSenderIsA) {
  ConversationTable t;
  t.Add(Packet("198.18.0.1", "198.18.0.2", 40000, 2222, 100));
  t.Add(Packet("198.18.0.2", "198.18.0.1", 2222, 40000, 52));
  t.Add(Packet("198.18.0.1", "198.18.0.2", 40000, 2222, 100));
  t.Add(Packet("198.18.0.1", "198.18.0.2", 40001, 2222, 60));
  ASSERT_EQ(t.conversations().size(), 2u);
  const auto& c = t.conversations()[0];
  EXPECT_EQ(c.a_to_b.src_port, 40000);
  EXPECT_EQ(c.frames_a_to_b, 2u);
  EXPECT_EQ(c.frame_bytes_a_to_b, 228u);
  EXPECT_EQ(c.ip_bytes_a_to_b, 200u);
  EXPECT_EQ(c.frames_b_to_a, 1u);
  EXPECT_EQ(c.frame_bytes_b_to_a, 66u);
}

TEST(TrainingPortFilter, BothDirectionsEveryPort) {
  EXPECT_EQ(TrainingPortFilter({2222}), "(tcp or udp) and (port 2222)");
  EXPECT_EQ(TrainingPortFilter({2222, 2223}),
            "(tcp or udp) and (port 2222 or port 2223)");
  EXPECT_EQ(TrainingPortFilter({}), "(tcp or udp)");
}

}  // namespace
}  // namespace trainscope
