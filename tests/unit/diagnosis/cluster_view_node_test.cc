// The node view in a cluster: a node whose only local training pods are
// workers names a hot PS on another node (peers named by the cluster-wide
// peer-pod watch), counts PS its workers never reached, and a node link
// filled by several pods is a node-level network_saturated.
#include <gtest/gtest.h>

#include "detector_cases.h"
#include "diagnosis/analysis.h"
#include "diagnosis/detectors.h"
#include "diagnosis/snapshot_window.h"

namespace trainscope::diagnosis {
namespace {

PodInfo Pod(const std::string& name, Role role, const std::string& node) {
  PodInfo p;
  p.uid = "u-" + name;
  p.name = name;
  p.namespace_name = "training";
  p.training_job = "ctr";
  p.role = role;
  p.node = node;
  return p;
}

// Snapshot i (5 s apart) of node-a: its own pods, the peer pods of every
// node, and each worker's cumulative bytes with each PS at `rates` bytes/s.
std::shared_ptr<const Snapshot> Snap(
    int i, const PodList& local, const PodList& peers,
    const std::map<std::string, double>& rates) {
  auto s = std::make_shared<Snapshot>();
  s->taken_at = std::chrono::system_clock::time_point() +
                std::chrono::hours(24 * 365 * 50) + std::chrono::seconds(5 * i);
  s->sequence = static_cast<uint64_t>(i + 1);
  s->pods = std::make_shared<const PodList>(local);
  s->peer_pods = std::make_shared<const PodList>(peers);
  for (const auto& pod : local) {
    PodSample& sample = s->pod_samples[pod.uid];
    sample.uid = pod.uid;
    sample.cgroup.cpu.usage_seconds = i;
    for (const auto& [ps, rate] : rates) {
      PeerTrafficSample p;
      p.pod_uid = pod.uid;
      p.peer_uid = "u-" + ps;
      p.peer_namespace = "training";
      p.peer_pod = ps;
      p.peer_role = Role::kPs;
      const auto bytes = static_cast<uint64_t>(rate * 5 * i / 2);
      p.receive_bytes = bytes;
      p.transmit_bytes = bytes;
      s->peer_traffic.push_back(p);
    }
  }
  return s;
}

struct NodeA {
  PodList local = {Pod("ctr-worker-0", Role::kWorker, "node-a"),
                   Pod("ctr-worker-1", Role::kWorker, "node-a")};
  // The watch of every node's training pods; node-a's own are in it too.
  PodList peers = {Pod("ctr-ps-0", Role::kPs, "node-b"),
                   Pod("ctr-ps-1", Role::kPs, "node-c"),
                   Pod("ctr-ps-2", Role::kPs, "node-c"),
                   Pod("ctr-ps-3", Role::kPs, "node-d"),
                   Pod("ctr-worker-0", Role::kWorker, "node-a"),
                   Pod("ctr-worker-1", Role::kWorker, "node-a")};
};

std::vector<Diagnosis> Replayed(const NodeA& node,
                                const std::map<std::string, double>& rates) {
  std::vector<std::shared_ptr<const Snapshot>> history;
  for (int i = 0; i < 12; ++i) {
    history.push_back(Snap(i, node.local, node.peers, rates));
  }
  return Replay(WindowFromSnapshots(history, "node-a"), DiagnosisSettings{})
      .active;
}

TEST(ClusterNodeView, RemoteHotPsNamedFromAWorkersOnlyNode) {
  NodeA node;
  // ctr-ps-0 (node-b) holds the embedding; ctr-ps-3 is never reached.
  const auto active =
      Replayed(node, {{"ctr-ps-0", 8e6}, {"ctr-ps-1", 1e6}, {"ctr-ps-2", 1e6}});
  std::vector<std::string> hot;
  for (const auto& d : active) {
    if (d.kind == kHotParameterServer) hot.push_back(d.pod);
  }
  EXPECT_EQ(hot, std::vector<std::string>{"ctr-ps-0"});
  for (const auto& d : active) {
    if (d.kind == kHotParameterServer) {
      // The job's four PS, from the pod lists: 8 of 10 MB/s is 0.8 of the
      // traffic against a fair 0.25.
      EXPECT_EQ(d.evidence["ps_count"], 4) << d.evidence.dump();
    }
  }
}

TEST(ClusterNodeView, PsCountComesFromTheRosterNotFromWhatWasSeen) {
  NodeA node;
  std::vector<std::shared_ptr<const Snapshot>> history;
  const std::map<std::string, double> rates = {{"ctr-ps-0", 1e6},
                                               {"ctr-ps-1", 1e6}};
  for (int i = 0; i < 3; ++i) {
    history.push_back(Snap(i, node.local, node.peers, rates));
  }
  const auto jobs =
      ComputeJobTraffic(ComputeStats(WindowFromSnapshots(history, "node-a")));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].ps, (std::vector<std::string>{"ctr-ps-0", "ctr-ps-1",
                                                  "ctr-ps-2", "ctr-ps-3"}));
  ASSERT_EQ(jobs[0].ps_traffic.size(), 4u);
  EXPECT_DOUBLE_EQ(jobs[0].ps_traffic[0].share, 0.5);
  EXPECT_DOUBLE_EQ(jobs[0].ps_traffic[3].share, 0);
}

TEST(ClusterNodeView, BalancedRemotePsStaySilent) {
  NodeA node;
  const auto active = Replayed(node, {{"ctr-ps-0", 2e6},
                                      {"ctr-ps-1", 2e6},
                                      {"ctr-ps-2", 2e6},
                                      {"ctr-ps-3", 2e6}});
  for (const auto& d : active) EXPECT_NE(d.kind, kHotParameterServer);
}

}  // namespace
}  // namespace trainscope::diagnosis

namespace trainscope::diagnosis::testing {
namespace {

// node-a runs ctr-ps-0 and one worker; the other workers run elsewhere and
// are seen only from the PS' side. rates[i]: worker i's bytes/s with the PS.
Window PsNode(const std::vector<double>& rates) {
  WindowBuilder b;
  b.Pod("ctr-ps-0", Role::kPs);
  for (size_t i = 0; i < rates.size(); ++i) {
    b.Peer(Key("ctr-worker-" + std::to_string(i)), Role::kWorker, rates[i] / 2,
           rates[i] / 2);
  }
  b.Pod("ctr-worker-0", Role::kWorker)
      .Peer(Key("ctr-ps-0"), Role::kPs, rates[0] / 2, rates[0] / 2);
  return b.Build();
}

TEST(ClusterNodeView, CrossNodeStragglerSeenFromTheLocalPs) {
  const auto found =
      FindingsOf(kStragglerWorker, PsNode({4e6, 4e6, 0.5e6, 4.2e6, 3.8e6}));
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  EXPECT_EQ(d.pod, "ctr-worker-2");  // on another node
  EXPECT_EQ(d.training_job, "ctr");
  EXPECT_EQ(d.evidence["measured_from"], "ps");
  EXPECT_EQ(d.evidence["workers"], 5);
  EXPECT_NE(d.summary.find("seen from this node's PS"), std::string::npos);
}

// A straggler of PsNode, worker 2, behind node-a's NIC of `speed` that
// carries `traffic` each way; the exchanges of the four workers elsewhere,
// 6.25 MB/s each way, cross it.
Window BehindThePsNodeNic(double speed, double traffic) {
  const Window nic = WindowBuilder()
                         .Node(std::nullopt, speed)
                         .NodeTraffic(traffic, traffic)
                         .Build();
  Window w = PsNode({4e6, 4e6, 0.5e6, 4.2e6, 3.8e6});
  w.nodes = nic.nodes;
  w.node_points = nic.node_points;
  return w;
}

TEST(ClusterNodeView, ASmallerShareOfTheFullPsNodeNicIsTheLinks) {
  // Full at 7 of 8 MB/s, most of it the job's exchanges.
  EXPECT_TRUE(
      FindingsOf(kStragglerWorker, BehindThePsNodeNic(8e6, 7e6)).empty());
}

TEST(ClusterNodeView, ANicFullOfOtherTenantsLeavesTheStraggler) {
  // Full at 67 of 75 MB/s, other tenants' traffic for the most part.
  const auto found =
      FindingsOf(kStragglerWorker, BehindThePsNodeNic(75e6, 67e6));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].diagnosis.pod, "ctr-worker-2");
}

TEST(ClusterNodeView, BalancedWorkersSeenFromThePsAreFine) {
  EXPECT_TRUE(
      FindingsOf(kStragglerWorker, PsNode({4e6, 4e6, 3.9e6, 4.2e6, 3.8e6}))
          .empty());
}

}  // namespace
}  // namespace trainscope::diagnosis::testing
