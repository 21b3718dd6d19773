// network_saturated at node level: a node link full of several pods' traffic
// none of which fills it alone names the node and the pods that share it.
#include <gtest/gtest.h>

#include "detector_cases.h"

namespace trainscope::diagnosis::testing {
namespace {

constexpr double kGbE = 125e6;  // bytes/s

// node-a with a 1 GbE link: PS each sending `tx` bytes/s to workers on
// other nodes (named peers not in this window), the NIC carrying the sum.
Window TwoPsOnOneNode(double tx_each, int ps = 2) {
  WindowBuilder b;
  b.Node(4, kGbE).NodeTraffic(0.1 * tx_each * ps, tx_each * ps);
  for (int i = 0; i < ps; ++i) {
    b.Pod("ctr-ps-" + std::to_string(i), Role::kPs)
        .Counter(&PodPoint::network_transmit_bytes, tx_each)
        .Counter(&PodPoint::network_receive_bytes, 0.1 * tx_each)
        .Peer(Key("ctr-worker-" + std::to_string(i)), Role::kWorker,
              0.1 * tx_each, tx_each);
  }
  return b.Build();
}

std::vector<Finding> NodeFindings(const Window& w) {
  std::vector<Finding> out;
  for (auto& f : FindingsOf(kNetworkSaturated, w)) {
    if (f.diagnosis.pod.empty()) out.push_back(std::move(f));
  }
  return out;
}

TEST(NodeLinkTest, SeveralPodsFillTheLink) {
  const auto all = FindingsOf(kNetworkSaturated, TwoPsOnOneNode(55e6));
  ASSERT_EQ(all.size(), 1u);  // no pod-level finding: 44% each
  const Diagnosis& d = all[0].diagnosis;
  EXPECT_EQ(all[0].level, Finding::Level::kEnter);
  EXPECT_EQ(d.pod, "");
  EXPECT_EQ(d.node, "node-a");
  EXPECT_EQ(d.training_job, "ctr");  // one job fills it
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_EQ(d.evidence["scope"], "node");
  EXPECT_EQ(d.evidence["direction"], "transmit");
  EXPECT_NEAR(d.evidence["utilization_ratio"].get<double>(), 0.88, 1e-3);
  ASSERT_EQ(d.evidence["pods"].size(), 2u);
  EXPECT_EQ(d.evidence["pods"][0]["pod"], "ctr-ps-0");
  EXPECT_NEAR(d.evidence["pods"][0]["link_share"].get<double>(), 0.44, 1e-3);
  EXPECT_NE(d.summary.find("ctr-ps-1"), std::string::npos) << d.summary;
  EXPECT_FALSE(d.recommendations.empty());
}

TEST(NodeLinkTest, CostIsTheLargestExchangeShareOnTheLink) {
  Window w = TwoPsOnOneNode(55e6);
  for (auto& [key, t] : w.pods) {
    for (auto& p : t.points) {
      for (auto& [peer, c] : p.peers) {
        c.exchange_seconds = 10 + (t.meta.pod == "ctr-ps-0" ? 0.3 : 0.1) * p.t;
      }
    }
  }
  const auto all = FindingsOf(kNetworkSaturated, w);
  ASSERT_EQ(all.size(), 1u);
  const Diagnosis& d = all[0].diagnosis;
  EXPECT_EQ(d.evidence["cost_model"], "exchange_share_upper_bound");
  EXPECT_GE(d.evidence["cost_fraction"].get<double>(), 0.3 - 1e-6);
}

TEST(NodeLinkTest, LevelsAndSeverities) {
  struct Case {
    const char* name;
    double tx_each;
    int ps;
    size_t findings;
    Finding::Level level;
    Severity severity;
  } cases[] = {
      // Without exchange times the link's utilization only bounds the
      // cost: a full link is a warning, never critical by itself.
      {"full", 60e6, 2, 1, Finding::Level::kEnter, Severity::kWarning},
      {"many_small", 17e6, 6, 1, Finding::Level::kEnter, Severity::kWarning},
      {"hold", 47e6, 2, 1, Finding::Level::kHold, Severity::kWarning},
      {"below_exit", 40e6, 2, 0, {}, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto found = NodeFindings(TwoPsOnOneNode(c.tx_each, c.ps));
    ASSERT_EQ(found.size(), c.findings);
    if (c.findings == 0) continue;
    EXPECT_EQ(found[0].level, c.level);
    EXPECT_EQ(found[0].diagnosis.severity, c.severity);
  }
}

TEST(NodeLinkTest, OnePodFillingTheLinkIsAPodFinding) {
  const auto all = FindingsOf(kNetworkSaturated, TwoPsOnOneNode(110e6, 1));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].diagnosis.pod, "ctr-ps-0");
  EXPECT_EQ(all[0].diagnosis.node, "node-a");
}

TEST(NodeLinkTest, UnknownCapacityOrCountersSayNothing) {
  WindowBuilder b;
  b.Node(4, std::nullopt).NodeTraffic(0, 1e9);
  b.Pod("ctr-ps-0", Role::kPs).Counter(&PodPoint::network_transmit_bytes, 5e8);
  EXPECT_TRUE(NodeFindings(b.Build()).empty());
  WindowBuilder c;
  c.Node(4, kGbE);  // speed, but no NIC counters
  c.Pod("ctr-ps-0", Role::kPs).Counter(&PodPoint::network_transmit_bytes, 5e8);
  EXPECT_TRUE(NodeFindings(c.Build()).empty());
}

// Traffic between pods of the node stays on its bridge: a pod whose peers
// are all local puts nothing on the link and is not named.
TEST(NodeLinkTest, LocalPeersAreNotOnTheLink) {
  Window w = TwoPsOnOneNode(55e6);
  auto& t = w.pods[Key("ctr-worker-9")];
  t.meta.namespace_name = "training";
  t.meta.pod = "ctr-worker-9";
  t.meta.training_job = "ctr";
  t.meta.role = Role::kWorker;
  t.meta.node = "node-a";
  for (double time : {0.0, 5.0, 10.0}) {
    PodPoint p;
    p.t = time;
    p.instance = "w9";
    p.network_transmit_bytes = 1e9 + 90e6 * time;
    p.peers[Key("ctr-ps-0")] = {0, 1e9 + 90e6 * time};
    t.points.push_back(p);
  }
  const auto found = NodeFindings(w);
  ASSERT_EQ(found.size(), 1u);
  for (const auto& pod : found[0].diagnosis.evidence["pods"]) {
    EXPECT_NE(pod["pod"], "ctr-worker-9");
  }
}

TEST(NodeLinkTest, NodesAreDistinctDiagnoses) {
  Diagnosis a, b;
  a.kind = b.kind = std::string(kNetworkSaturated);
  a.node = "node-a";
  b.node = "node-b";
  EXPECT_NE(DiagnosisKey(a), DiagnosisKey(b));
  EXPECT_EQ(DiagnosisJson(a)["node"], "node-a");
}

// The cluster view's batches: each names the pods of its own jobs on a
// node's link; merged, one diagnosis lists the busiest of all.
TEST(NodeLinkTest, BatchesMergeIntoOneDiagnosisPerNode) {
  Window one = TwoPsOnOneNode(55e6);
  Window other = one;  // another job's PS on the same node, same NIC
  std::erase_if(other.pods, [](const auto&) { return true; });
  {
    WindowBuilder b;
    b.Node(4, kGbE).NodeTraffic(0.1 * 110e6, 110e6);
    b.Pod("big-ps-0", Role::kPs)
        .Counter(&PodPoint::network_transmit_bytes, 60e6)
        .Peer(Key("big-worker-0"), Role::kWorker, 0, 60e6);
    other = b.Build();
    for (auto& [key, t] : other.pods) t.meta.training_job = "big";
  }
  std::vector<Diagnosis> all;
  for (const Window* w : {&one, &other}) {
    for (auto& f : NodeFindings(*w)) all.push_back(f.diagnosis);
  }
  ASSERT_EQ(all.size(), 2u);
  all[0].since =
      std::chrono::system_clock::time_point(std::chrono::seconds(20));
  all[1].since =
      std::chrono::system_clock::time_point(std::chrono::seconds(10));
  NetworkSettings s;
  s.node_pods_listed = 2;
  const auto merged = MergeNodeLinkDiagnoses(all, s);
  ASSERT_EQ(merged.size(), 1u);
  const Diagnosis& d = merged[0];
  EXPECT_EQ(d.node, "node-a");
  EXPECT_EQ(d.training_job, "");             // two jobs share the link
  ASSERT_EQ(d.evidence["pods"].size(), 2u);  // the busiest two of three
  EXPECT_EQ(d.evidence["pods"][0]["pod"], "big-ps-0");
  EXPECT_EQ(d.evidence["pods"][1]["pod"], "ctr-ps-0");
  EXPECT_NE(d.summary.find("big-ps-0"), std::string::npos) << d.summary;
  EXPECT_EQ(d.since, all[1].since);  // the earliest start
}

TEST(NodeLinkTest, MergeDropsNodeFindingWhereOnePodFillsTheLink) {
  std::vector<Diagnosis> all;
  for (auto& f : NodeFindings(TwoPsOnOneNode(55e6))) {
    all.push_back(f.diagnosis);
  }
  // Another batch saw one pod fill node-a's NIC alone.
  for (auto& f : FindingsOf(kNetworkSaturated, TwoPsOnOneNode(110e6, 1))) {
    all.push_back(f.diagnosis);
  }
  Diagnosis unrelated;
  unrelated.kind = "hot_parameter_server";
  unrelated.pod = "x";
  all.push_back(unrelated);
  const auto merged = MergeNodeLinkDiagnoses(all, NetworkSettings{});
  ASSERT_EQ(merged.size(), 2u);
  for (const auto& d : merged) EXPECT_FALSE(d.pod.empty()) << d.kind;
}

TEST(NodeLinkTest, MergeOfOneBatchChangesNothing) {
  std::vector<Diagnosis> all;
  for (auto& f : NodeFindings(TwoPsOnOneNode(55e6))) {
    all.push_back(f.diagnosis);
  }
  const auto merged = MergeNodeLinkDiagnoses(all, NetworkSettings{});
  ASSERT_EQ(merged.size(), 1u);
  EXPECT_EQ(DiagnosisJson(merged[0]), DiagnosisJson(all[0]));
}

}  // namespace
}  // namespace trainscope::diagnosis::testing
