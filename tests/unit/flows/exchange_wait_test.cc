// The time a pod waits on its peers' answers, from the bursts' turns
// (docs/flows.md, "Waits on peers").
#include "flows/exchange_wait.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "flows/peers.h"

namespace trainscope {
namespace {

constexpr FlowDirection kTx = FlowDirection::kTransmit;
constexpr FlowDirection kRx = FlowDirection::kReceive;
constexpr uint16_t kServer = 2222;  // a training port
constexpr uint16_t kEphemeral = 40000;

struct Piece {
  FlowDirection direction;
  uint32_t turn;
  double start_s;
  double end_s;
  uint16_t local_port = kEphemeral;
  uint16_t peer_port = kServer;
  const char* peer = "198.18.0.20";
};

BurstEvent EventOf(const Piece& p) {
  BurstEvent b;
  b.pod.cgroup_id = 11;
  b.peer = *IpAddress::Parse(p.peer);
  b.direction = p.direction;
  b.start_s = p.start_s;
  b.end_s = p.end_s;
  b.payload_bytes = 1000;
  b.packets = 1;
  b.local_port = p.local_port;
  b.peer_port = p.peer_port;
  b.turn = p.turn;
  return b;
}

struct Span {
  double start_s;
  double end_s;
};

struct Case {
  std::string name;
  // Each inner list is one drain of the source (one Add call), in the
  // order the source reports them.
  std::vector<std::vector<Piece>> drains;
  std::vector<Span> want;
};

TEST(ExchangeWaitsTest, FromTheRequestToTheEndOfItsAnswer) {
  const Case cases[] = {
      {"an answer at once: the request's start to the answer's end",
       {{{kTx, 0, 0.0, 0.001}, {kRx, 1, 0.002, 0.05}, {kTx, 2, 0.1, 0.101}}},
       {{0.0, 0.05}}},
      {"a throttled answer in pieces a CFS period apart: the silences count",
       {{{kTx, 0, 0.0, 0.001},
         {kRx, 1, 0.09, 0.095},
         {kRx, 1, 0.19, 0.195},
         {kRx, 1, 0.29, 0.3},
         {kTx, 2, 0.4, 0.401}}},
       {{0.0, 0.3}}},
      {"the kernel's order: answer pieces, then the request (sent when the "
       "pod next asks), the last piece with the next answer, over drains",
       {{{kRx, 1, 0.09, 0.095}, {kRx, 1, 0.19, 0.195}},
        {{kTx, 0, 0.0, 0.001}, {kRx, 1, 0.29, 0.3}},
        {{kTx, 2, 0.4, 0.401}, {kRx, 3, 0.45, 0.5}, {kTx, 4, 0.6, 0.601}}},
       {{0.0, 0.3}, {0.4, 0.5}}},
      {"not complete before a later turn shows",
       {{{kTx, 0, 0.0, 0.001}, {kRx, 1, 0.002, 0.05}}},
       {}},
      {"the pod answers (its port is the server's): its answer's span, not "
       "the time the request waited at the pod for its own gradient",
       {{{kRx, 0, 0.0, 0.001, kServer, kEphemeral},
         {kTx, 1, 0.5, 0.55, kServer, kEphemeral},
         {kTx, 1, 0.65, 0.7, kServer, kEphemeral},
         {kRx, 2, 0.71, 0.72, kServer, kEphemeral},
         {kTx, 3, 1.0, 1.1, kServer, kEphemeral}}},
       {{0.5, 0.7}}},
      {"first seen mid-connection (an answer at turn 0): the server port "
       "says who asks",
       {{{kRx, 0, 0.0, 0.05},
         {kTx, 1, 0.1, 0.101},
         {kRx, 2, 0.12, 0.3},
         {kTx, 3, 0.4, 0.401}}},
       {{0.1, 0.3}}},
      {"no server port: the side that spoke at turn 0 asks",
       {{{kTx, 0, 0.0, 0.001, 40001, 40002},
         {kRx, 1, 0.01, 0.2, 40001, 40002},
         {kTx, 2, 0.3, 0.301, 40001, 40002}}},
       {{0.0, 0.2}}},
      {"no server port, the peer spoke first: the pod answers",
       {{{kRx, 0, 0.0, 0.001, 40001, 40002},
         {kTx, 1, 0.01, 0.2, 40001, 40002},
         {kRx, 2, 0.3, 0.301, 40001, 40002}}},
       {{0.01, 0.2}}},
      {"no ports (no connection known): nothing",
       {{{kTx, 0, 0.0, 0.001, 0, 0},
         {kRx, 1, 0.01, 0.2, 0, 0},
         {kTx, 2, 0.3, 0.301, 0, 0}}},
       {}},
      {"a lost answer: that request is given up, the next one counts",
       {{{kTx, 0, 0.0, 0.001},
         {kTx, 2, 0.3, 0.301},
         {kRx, 3, 0.31, 0.4},
         {kTx, 4, 0.5, 0.501}}},
       {{0.3, 0.4}}},
      {"a late piece of a reported answer adds nothing",
       {{{kTx, 0, 0.0, 0.001}, {kRx, 1, 0.01, 0.1}, {kTx, 2, 0.3, 0.301}},
        {{kRx, 1, 0.15, 0.2}}},
       {{0.0, 0.1}}},
      {"two connections to one peer: each its own exchanges",
       {{{kTx, 0, 0.0, 0.001},
         {kTx, 0, 0.0, 0.001, 40001},
         {kRx, 1, 0.01, 0.2},
         {kRx, 1, 0.01, 0.1, 40001},
         {kTx, 2, 0.3, 0.301},
         {kTx, 2, 0.3, 0.301, 40001}}},
       {{0.0, 0.2}, {0.0, 0.1}}},
      {"the ports' next connection starts again from turn 0",
       {{{kTx, 40, 0.0, 0.001}, {kRx, 41, 0.01, 0.1}, {kTx, 42, 0.2, 0.201}},
        {{kTx, 0, 1.0, 1.001}, {kRx, 1, 1.01, 1.3}, {kTx, 2, 1.4, 1.401}}},
       {{0.0, 0.1}, {1.0, 1.3}}},
  };
  for (const Case& c : cases) {
    ExchangeWaits waits({kServer});
    std::vector<WaitSpan> got;
    for (const auto& drain : c.drains) {
      std::vector<BurstEvent> events;
      for (const Piece& p : drain) events.push_back(EventOf(p));
      for (const WaitSpan& w : waits.Add(events)) got.push_back(w);
    }
    ASSERT_EQ(got.size(), c.want.size()) << c.name;
    for (size_t i = 0; i < got.size(); ++i) {
      EXPECT_NEAR(got[i].start_s, c.want[i].start_s, 1e-9) << c.name;
      EXPECT_NEAR(got[i].end_s, c.want[i].end_s, 1e-9) << c.name;
      EXPECT_EQ(got[i].pod.cgroup_id, 11u) << c.name;
      EXPECT_EQ(got[i].peer, *IpAddress::Parse("198.18.0.20")) << c.name;
    }
  }
}

TEST(ExchangeWaitsTest, BoundedByConnections) {
  ExchangeWaits waits({kServer}, 4);
  for (uint16_t port = 40000; port < 40010; ++port) {
    const BurstEvent b = EventOf({kTx, 0, 1.0 * port, 1.0 * port + 0.01, port});
    waits.Add(std::vector<BurstEvent>{b});
    EXPECT_LE(waits.connections(), 4u);
  }
}

PodInfo Pod(const std::string& uid, const std::string& name,
            const std::string& ip, Role role) {
  PodInfo p;
  p.uid = uid;
  p.name = name;
  p.namespace_name = "ns";
  p.pod_ip = ip;
  p.role = role;
  p.phase = "Running";
  p.training_job = "job";
  return p;
}

// A worker reading two variables from one PS at once, on two connections:
// the waits overlap and count once; a second PS's wait is its own.
TEST(PeerLedgerWaitTest, WaitsCountOncePerPeerAndReachTheSamples) {
  PodList pods = {Pod("u-w0", "w0", "198.18.0.10", Role::kWorker),
                  Pod("u-ps0", "ps0", "198.18.0.20", Role::kPs),
                  Pod("u-ps1", "ps1", "198.18.0.21", Role::kPs)};
  PeerResolver r(pods, {{11, "u-w0"}}, {"u-w0"});
  PeerLedger ledger;
  std::vector<FlowDelta> deltas;
  for (const char* ps : {"198.18.0.20", "198.18.0.21"}) {
    FlowDelta d;
    d.key.pod.cgroup_id = 11;
    d.key.peer = *IpAddress::Parse(ps);
    d.key.direction = FlowDirection::kReceive;
    d.counters = {1000, 900, 1};
    deltas.push_back(d);
  }
  ledger.Add(deltas, r);
  LocalPodRef w0{11, {}};
  const IpAddress ps0 = *IpAddress::Parse("198.18.0.20");
  const IpAddress ps1 = *IpAddress::Parse("198.18.0.21");
  ledger.AddWaits({{w0, ps0, 0.0, 0.3}, {w0, ps1, 0.0, 0.05}}, r);
  ledger.AddWaits({{w0, ps0, 0.1, 0.4}, {w0, ps0, 1.0, 1.2}}, r);
  EXPECT_NEAR(ledger.totals().at({"u-w0", "u-ps0"}).wait_seconds, 0.6, 1e-9);
  EXPECT_NEAR(ledger.totals().at({"u-w0", "u-ps1"}).wait_seconds, 0.05, 1e-9);
  // A pair whose bytes are not counted gets no wait.
  ledger.AddWaits({{w0, *IpAddress::Parse("198.18.0.99"), 0.0, 1.0}}, r);
  EXPECT_EQ(ledger.totals().size(), 2u);
  // Samples carry waits once bursts are tracked.
  EXPECT_FALSE(ledger.Samples(pods)[0].wait_seconds.has_value());
  ledger.AddBursts({}, r, 0.02);
  for (const auto& s : ledger.Samples(pods)) {
    ASSERT_TRUE(s.wait_seconds.has_value());
    EXPECT_NEAR(*s.wait_seconds, s.peer_pod == "ps0" ? 0.6 : 0.05, 1e-9);
  }
}

}  // namespace
}  // namespace trainscope
