#include "flows/peers.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

PodInfo Pod(const std::string& uid, const std::string& name,
            const std::string& ip, Role role = Role::kWorker,
            const std::string& phase = "Running") {
  PodInfo p;
  p.uid = uid;
  p.name = name;
  p.namespace_name = "ns";
  p.pod_ip = ip;
  p.role = role;
  p.phase = phase;
  p.training_job = "job";
  return p;
}

FlowDelta Delta(uint64_t cg, const std::string& peer, FlowDirection dir,
                uint64_t bytes, uint16_t peer_port = 40000) {
  FlowDelta d;
  d.key.pod.cgroup_id = cg;
  d.key.peer = *IpAddress::Parse(peer);
  d.key.local_port = 2222;
  d.key.peer_port = peer_port;
  d.key.direction = dir;
  d.counters = {bytes, bytes - bytes / 10, 1};
  return d;
}

TEST(PeerResolver, ResolvesKnownUnknownReusedAndHostNetworkAddresses) {
  PodList pods = {
      Pod("u-w0", "w0", "198.18.0.10"),
      Pod("u-ps0", "ps0", "198.18.0.20", Role::kPs),
      // A finished pod still lists the address a new pod holds.
      Pod("u-old", "old", "198.18.0.30", Role::kWorker, "Succeeded"),
      Pod("u-new", "new", "198.18.0.30", Role::kWorker, "Running"),
      Pod("u-host", "host", "10.0.0.1")};
  pods.back().host_network = true;
  PeerResolver r(pods, {{11, "u-w0"}, {12, "u-gone"}}, {"u-w0", "u-ps0"});
  struct Case {
    const char* address;
    const char* uid;  // "" = unknown
  };
  const Case cases[] = {
      {"198.18.0.20", "u-ps0"}, {"198.18.0.10", "u-w0"},
      {"198.18.0.30", "u-new"}, {"10.0.0.1", ""},
      {"198.18.9.9", ""},       {"::ffff:198.18.0.20", "u-ps0"}};
  for (const auto& c : cases) {
    const PodInfo* p = r.Peer(*IpAddress::Parse(c.address));
    EXPECT_EQ(p ? p->uid : "", c.uid) << c.address;
  }
  EXPECT_EQ(r.Local({11, {}})->uid, "u-w0");
  EXPECT_EQ(r.Local({12, {}}), nullptr);  // cgroup of a pod no longer listed
  EXPECT_EQ(r.Local({0, *IpAddress::Parse("198.18.0.20")})->uid, "u-ps0");
  // Not local: a pod on another node is never "ours" in pcap mode.
  EXPECT_EQ(r.Local({0, *IpAddress::Parse("198.18.0.30")}), nullptr);
}

TEST(PeerLedger, AggregatesUnknownPeersAndDropsPorts) {
  PodList pods = {Pod("u-w0", "w0", "198.18.0.10"),
                  Pod("u-ps0", "ps0", "198.18.0.20", Role::kPs)};
  PeerResolver r(pods, {{11, "u-w0"}}, {"u-w0"});
  PeerLedger ledger;
  ledger.Add({Delta(11, "198.18.0.20", FlowDirection::kTransmit, 1000, 2222),
              Delta(11, "198.18.0.20", FlowDirection::kTransmit, 500, 2223),
              Delta(11, "198.18.0.20", FlowDirection::kReceive, 300, 41000),
              Delta(11, "203.0.113.1", FlowDirection::kReceive, 70, 50070),
              Delta(11, "203.0.113.2", FlowDirection::kReceive, 30, 8020),
              Delta(99, "198.18.0.20", FlowDirection::kTransmit, 5)},
             r);
  auto samples = ledger.Samples(pods);
  ASSERT_EQ(samples.size(), 2u);  // one known peer, one "" aggregate
  const auto& unknown = samples[0].peer_uid.empty() ? samples[0] : samples[1];
  const auto& ps = samples[0].peer_uid.empty() ? samples[1] : samples[0];
  EXPECT_EQ(unknown.pod_uid, "u-w0");
  EXPECT_EQ(unknown.peer_pod, "");
  EXPECT_EQ(unknown.receive_bytes, 100u);
  EXPECT_EQ(unknown.receive_packets, 2u);
  EXPECT_EQ(ps.peer_pod, "ps0");
  EXPECT_EQ(ps.peer_role, Role::kPs);
  EXPECT_EQ(ps.transmit_bytes, 1500u);
  EXPECT_EQ(ps.receive_bytes, 300u);
  EXPECT_EQ(ledger.unattributed_bytes(), 5u);

  // Counters only grow across cycles.
  ledger.Add({Delta(11, "198.18.0.20", FlowDirection::kTransmit, 100)}, r);
  EXPECT_EQ(ledger.totals().at({"u-w0", "u-ps0"}).transmit.bytes, 1600u);
}

BurstEvent Burst(uint64_t cg, const std::string& peer, double start_s,
                 double end_s) {
  BurstEvent b;
  b.pod.cgroup_id = cg;
  b.peer = *IpAddress::Parse(peer);
  b.direction = FlowDirection::kReceive;
  b.start_s = start_s;
  b.end_s = end_s;
  b.payload_bytes = 1000;
  b.packets = 1;
  return b;
}

TEST(PeerLedger, ExchangeSecondsCountAPeersConnectionsOnce) {
  PodList pods = {Pod("u-w0", "w0", "198.18.0.10"),
                  Pod("u-ps0", "ps0", "198.18.0.20", Role::kPs),
                  Pod("u-ps1", "ps1", "198.18.0.21", Role::kPs)};
  PeerResolver r(pods, {{11, "u-w0"}}, {"u-w0"});
  PeerLedger ledger;
  ledger.Add({Delta(11, "198.18.0.20", FlowDirection::kReceive, 1000),
              Delta(11, "198.18.0.21", FlowDirection::kReceive, 1000)},
             r);
  const double gap = 0.02;
  // Two connections to ps0 carry one exchange, 10.0 .. 10.5; the second
  // connection's piece comes a cycle later. A third piece joins across the
  // gap. ps1's exchange at the same time is its own.
  ledger.AddBursts({Burst(11, "198.18.0.20", 10.0, 10.3),
                    Burst(11, "198.18.0.21", 10.0, 10.2)},
                   r, gap);
  ledger.AddBursts({Burst(11, "198.18.0.20", 10.1, 10.5),
                    Burst(11, "198.18.0.20", 10.51, 10.6),
                    Burst(11, "198.18.0.20", 11.0, 11.1)},
                   r, gap);
  EXPECT_NEAR(ledger.totals().at({"u-w0", "u-ps0"}).receive_exchange_seconds,
              0.6 + 0.1, 1e-9);
  EXPECT_NEAR(ledger.totals().at({"u-w0", "u-ps1"}).receive_exchange_seconds,
              0.2, 1e-9);
  // A piece inside an exchange already counted adds nothing.
  ledger.AddBursts({Burst(11, "198.18.0.20", 10.2, 10.4)}, r, gap);
  EXPECT_NEAR(ledger.totals().at({"u-w0", "u-ps0"}).receive_exchange_seconds,
              0.7, 1e-9);
}

TEST(PeerLedger, IpReuseKeepsOldCountersWithTheOldPodAndPrunesGonePods) {
  PodList before = {Pod("u-w0", "w0", "198.18.0.10"),
                    Pod("u-ps0", "ps0", "198.18.0.20", Role::kPs)};
  PeerLedger ledger;
  ledger.Add({Delta(11, "198.18.0.20", FlowDirection::kTransmit, 1000)},
             PeerResolver(before, {{11, "u-w0"}}, {"u-w0"}));
  // ps0 is replaced by ps0' that got the same IP.
  PodList after = {Pod("u-w0", "w0", "198.18.0.10"),
                   Pod("u-ps0b", "ps0", "198.18.0.20", Role::kPs)};
  ledger.Add({Delta(11, "198.18.0.20", FlowDirection::kTransmit, 10)},
             PeerResolver(after, {{11, "u-w0"}}, {"u-w0"}));
  EXPECT_EQ(ledger.totals().at({"u-w0", "u-ps0"}).transmit.bytes, 1000u);
  EXPECT_EQ(ledger.totals().at({"u-w0", "u-ps0b"}).transmit.bytes, 10u);
  ledger.Prune(after);
  EXPECT_EQ(ledger.totals().count({"u-w0", "u-ps0"}), 0u);
  EXPECT_EQ(ledger.totals().size(), 1u);
  ledger.Prune({});
  EXPECT_TRUE(ledger.totals().empty());
}

TEST(PeerResolver, ResolvesPeersFromThePeerTable) {
  // This node runs w0; ps0 runs on another node and is only in the peer
  // table (the peer-pod watch), which also repeats w0 with stale data.
  PodList node = {Pod("u-w0", "w0", "198.18.0.10")};
  PodList peers = {Pod("u-ps0", "ps0", "198.18.1.20", Role::kPs),
                   Pod("u-w0", "w0-stale", "198.18.1.99")};
  peers[0].node = "node-b";
  PeerResolver r(node, {{11, "u-w0"}}, {"u-w0", "u-ps0"}, &peers);
  const PodInfo* ps = r.Peer(*IpAddress::Parse("198.18.1.20"));
  ASSERT_NE(ps, nullptr);
  EXPECT_EQ(ps->uid, "u-ps0");
  EXPECT_EQ(ps->node, "node-b");
  // The pod table's entry wins for a pod both know.
  EXPECT_EQ(r.Peer(*IpAddress::Parse("198.18.0.10"))->name, "w0");
  EXPECT_EQ(r.Peer(*IpAddress::Parse("198.18.1.99")), nullptr);
  // A peer-table pod is never local, even if listed as local.
  EXPECT_EQ(r.Local({0, *IpAddress::Parse("198.18.1.20")}), nullptr);
  EXPECT_EQ(r.Local({0, *IpAddress::Parse("198.18.0.10")})->uid, "u-w0");

  PeerLedger ledger;
  ledger.Add({Delta(11, "198.18.1.20", FlowDirection::kReceive, 800),
              Delta(11, "198.18.9.9", FlowDirection::kReceive, 5)},
             r);
  auto samples = ledger.Samples(node, &peers);
  ASSERT_EQ(samples.size(), 2u);
  const auto& named = samples[0].peer_uid.empty() ? samples[1] : samples[0];
  EXPECT_EQ(named.pod_uid, "u-w0");
  EXPECT_EQ(named.peer_pod, "ps0");
  EXPECT_EQ(named.peer_namespace, "ns");
  EXPECT_EQ(named.peer_role, Role::kPs);
  EXPECT_EQ(named.receive_bytes, 800u);
  // Without the peer table the same counters have no peer identity.
  const auto anonymous = ledger.Samples(node);
  ASSERT_EQ(anonymous.size(), 2u);
  for (const auto& s : anonymous) EXPECT_EQ(s.peer_pod, "");

  // Pruning keeps pairs whose peer is in the peer table; a peer gone from
  // both tables, or a local pod gone from the pod table, is forgotten.
  ledger.Prune(node, &peers);
  EXPECT_EQ(ledger.totals().count({"u-w0", "u-ps0"}), 1u);
  ledger.Prune(node, nullptr);
  EXPECT_EQ(ledger.totals().count({"u-w0", "u-ps0"}), 0u);
  ledger.Prune({}, &peers);  // w0 left this node (still a peer elsewhere)
  EXPECT_TRUE(ledger.totals().empty());
}

}  // namespace
}  // namespace trainscope
