// The agent's path: Snapshots -> window -> runner, with synthetic samples
// (restart mid-window, late pods, GPU usage, bandwidth annotations).
#include "diagnosis/snapshot_window.h"

#include <gtest/gtest.h>

#include "diagnosis/analysis.h"
#include "diagnosis/runner.h"

namespace trainscope::diagnosis {
namespace {

using Clock = std::chrono::system_clock;
constexpr double MB = 1e6;

PodInfo Pod(const std::string& name, Role role, const std::string& uid) {
  PodInfo p;
  p.uid = uid;
  p.namespace_name = "training";
  p.name = name;
  p.training_job = "ctr";
  p.role = role;
  return p;
}

// A sequence of snapshots of a job; `at(i, snapshot)` fills sample i.
class SnapshotSeries {
 public:
  explicit SnapshotSeries(PodList pods) : pods_(std::move(pods)) {}
  std::shared_ptr<Snapshot> Next() {
    auto s = std::make_shared<Snapshot>();
    s->taken_at = t0_ + std::chrono::seconds(5 * seq_);
    s->sequence = ++seq_;
    s->pods = std::make_shared<const PodList>(pods_);
    s->node.cpu_count = 8;
    NicSample nic;
    nic.device = "eth0";
    nic.speed_bytes_per_second = 125e6;
    s->node.nics.push_back(nic);
    return s;
  }
  PodList& pods() { return pods_; }
  double t(int i) const { return 5.0 * i; }

 private:
  PodList pods_;
  Clock::time_point t0_ = Clock::now() - std::chrono::minutes(10);
  uint64_t seq_ = 0;
};

void AddSample(Snapshot& s, const std::string& uid, double cpu_seconds) {
  PodSample& p = s.pod_samples[uid];
  p.uid = uid;
  p.cgroup.cpu.usage_seconds = cpu_seconds;
}

void AddPeer(Snapshot& s, const std::string& uid, const std::string& peer,
             Role role, double bytes) {
  PeerTrafficSample pt;
  pt.pod_uid = uid;
  pt.peer_namespace = "training";
  pt.peer_pod = peer;
  pt.peer_role = role;
  pt.receive_bytes = static_cast<uint64_t>(bytes / 2);
  pt.transmit_bytes = static_cast<uint64_t>(bytes / 2);
  s.peer_traffic.push_back(pt);
}

TEST(SnapshotWindowTest, RestartMidWindowKeepsTheRateRight) {
  SnapshotSeries series({Pod("ctr-worker-0", Role::kWorker, "uid-1")});
  std::vector<std::shared_ptr<const Snapshot>> history;
  for (int i = 0; i < 4; ++i) {
    if (i == 2) series.pods()[0].uid = "uid-2";  // the pod was recreated
    auto s = series.Next();
    const std::string uid = series.pods()[0].uid;
    // 0.5 cores; the new incarnation's counter starts again from 0.
    AddSample(*s, uid, i < 2 ? 100 + 2.5 * i : 2.5 * (i - 2));
    history.push_back(s);
  }
  Window w = WindowFromSnapshots(history, "node-a");
  auto stats = ComputeStats(w);
  const auto& pod = stats.pods.at("training/ctr-worker-0");
  ASSERT_TRUE(pod.cpu_cores);
  EXPECT_NEAR(*pod.cpu_cores, 0.5, 1e-9);
  EXPECT_EQ(w.pods.at("training/ctr-worker-0").points.size(), 4u);
  EXPECT_EQ(pod.meta.node, "node-a");
  EXPECT_EQ(pod.node_cpu_count, 8);
}

TEST(SnapshotWindowTest, AnnotationsAndGpuUsage) {
  PodInfo p = Pod("ctr-worker-0", Role::kWorker, "u");
  p.annotations["kubernetes.io/egress-bandwidth"] = "10M";
  p.spec_memory_limit_bytes = 1 << 30;
  SnapshotSeries series({p});
  std::vector<std::shared_ptr<const Snapshot>> history;
  for (int i = 0; i < 3; ++i) {
    auto s = series.Next();
    AddSample(*s, "u", i * 2.5);
    for (unsigned gpu = 0; gpu < 2; ++gpu) {
      GpuPodUsage g;
      g.pod_uid = "u";
      g.gpu_index = gpu;
      g.utilization_ratio = gpu == 0 ? 0.1 : 0.0;
      s->gpu_pods.push_back(g);
    }
    history.push_back(s);
  }
  auto stats = ComputeStats(WindowFromSnapshots(history, "node-a"));
  const auto& pod = stats.pods.at("training/ctr-worker-0");
  EXPECT_EQ(pod.meta.egress_limit_bytes_per_second, 1.25e6);
  EXPECT_FALSE(pod.meta.ingress_limit_bytes_per_second);
  EXPECT_EQ(pod.node_nic_speed_bytes_per_second, 125e6);
  ASSERT_TRUE(pod.node_receive_bytes_per_second);  // the NIC's counters
  EXPECT_EQ(*pod.node_receive_bytes_per_second, 0);
  EXPECT_EQ(pod.memory_limit_bytes, double(1 << 30));
  EXPECT_EQ(pod.gpus, 2u);
  ASSERT_TRUE(pod.gpu_utilization_ratio);
  EXPECT_NEAR(*pod.gpu_utilization_ratio, 0.05, 1e-9);
}

// A node whose pods come, go and restart, whose peers change roles and whose
// NIC counters are missing for a while: snapshot i of it.
std::shared_ptr<Snapshot> ChurningSnapshot(SnapshotSeries& series, int i) {
  PodList pods = {Pod("ctr-ps-0", Role::kPs, "ps")};
  if (i >= 3 && i < 10)
    pods.push_back(Pod("ctr-worker-0", Role::kWorker, "w0"));
  pods.push_back(Pod("ctr-worker-1", Role::kWorker, i < 6 ? "w1" : "w1-new"));
  series.pods() = pods;
  auto s = series.Next();
  if (i == 7 || i == 8) s->node.nics.clear();
  for (const auto& pod : pods) {
    AddSample(*s, pod.uid, 0.5 * i);
    AddPeer(*s, pod.uid, i < 5 ? "remote-ps" : "remote-chief",
            i < 5 ? Role::kPs : Role::kUnknown, 1e3 * i);
  }
  if (i % 4 == 0) {
    GpuPodUsage g;
    g.pod_uid = "ps";
    g.utilization_ratio = 0.25;
    s->gpu_pods.push_back(g);
  }
  return s;
}

TEST(SlidingSnapshotWindowTest, EqualsARebuildAsTheHistorySlides) {
  SnapshotSeries series({});
  SlidingSnapshotWindow sliding("node-a");
  std::vector<std::shared_ptr<const Snapshot>> history;
  for (int i = 0; i < 16; ++i) {
    history.push_back(ChurningSnapshot(series, i));
    if (history.size() > 5) history.erase(history.begin());
    const Window& got = sliding.Update(history);
    EXPECT_TRUE(got == WindowFromSnapshots(history, "node-a")) << "step " << i;
    // Called again without a new snapshot: unchanged.
    EXPECT_TRUE(sliding.Update(history) ==
                WindowFromSnapshots(history, "node-a"))
        << "step " << i << " (repeated)";
  }
  // The roles only old snapshots reported are gone, as in a rebuild.
  EXPECT_FALSE(
      sliding.Update(history).peer_roles.contains("training/remote-ps"));
}

TEST(SlidingSnapshotWindowTest, HistoryThatWentBackOrHasNoSequenceIsRebuilt) {
  SnapshotSeries first({});
  SlidingSnapshotWindow sliding("node-a");
  std::vector<std::shared_ptr<const Snapshot>> history;
  for (int i = 0; i < 6; ++i) history.push_back(ChurningSnapshot(first, i));
  sliding.Update(history);

  SnapshotSeries restarted({});  // sequences start at 1 again
  std::vector<std::shared_ptr<const Snapshot>> again;
  for (int i = 0; i < 3; ++i) again.push_back(ChurningSnapshot(restarted, i));
  EXPECT_TRUE(sliding.Update(again) == WindowFromSnapshots(again, "node-a"));

  std::vector<std::shared_ptr<const Snapshot>> unnumbered;
  for (int i = 0; i < 4; ++i) {
    auto s = ChurningSnapshot(restarted, i);
    s->sequence = 0;
    unnumbered.push_back(s);
  }
  EXPECT_TRUE(sliding.Update(unnumbered) ==
              WindowFromSnapshots(unnumbered, "node-a"));
  EXPECT_TRUE(sliding.Update({}) == Window());
}

// Hot PS on this node, seen from local workers, then balanced again: the
// runner enters within 3 windows and clears after the exit windows.
TEST(DiagnosisRunnerTest, HotPsEntersAndClears) {
  PodList pods = {Pod("ctr-ps-0", Role::kPs, "ps0"),
                  Pod("ctr-ps-1", Role::kPs, "ps1"),
                  Pod("ctr-ps-2", Role::kPs, "ps2")};
  for (int w = 0; w < 3; ++w) {
    pods.push_back(Pod("ctr-worker-" + std::to_string(w), Role::kWorker,
                       "w" + std::to_string(w)));
  }
  SnapshotSeries series(pods);
  DiagnosisRunner runner("node-a");
  std::vector<std::shared_ptr<const Snapshot>> history;
  std::vector<double> bytes(3, 0);  // cumulative per PS, per worker
  int entered_at = -1, cleared_at = -1;
  for (int i = 0; i < 20; ++i) {
    const bool hot = i < 10;
    const double step[3] = {hot ? 4 * MB : 1 * MB, hot ? 0.5 * MB : 1 * MB,
                            hot ? 0.5 * MB : 1 * MB};
    auto s = series.Next();
    for (int p = 0; p < 3; ++p) {
      bytes[p] += step[p] * 5;
      AddSample(*s, "ps" + std::to_string(p), 1);
    }
    for (int w = 0; w < 3; ++w) {
      const std::string uid = "w" + std::to_string(w);
      AddSample(*s, uid, 1);
      for (int p = 0; p < 3; ++p) {
        AddPeer(*s, uid, "ctr-ps-" + std::to_string(p), Role::kPs, bytes[p]);
      }
    }
    history.push_back(s);
    if (history.size() > 120) history.erase(history.begin());
    runner.Update(history);
    const bool active = !runner.Active().empty();
    if (active && entered_at < 0) entered_at = i;
    if (!active && entered_at >= 0 && cleared_at < 0) cleared_at = i;
  }
  // The condition holds from the second sample (first rate); 2 windows.
  EXPECT_GE(entered_at, 2);
  EXPECT_LE(entered_at, 3);
  EXPECT_GT(cleared_at, 10);
  EXPECT_LE(cleared_at, 10 + 2 + 3);
  auto jobs = runner.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_EQ(jobs[0].ps_traffic.size(), 3u);
  EXPECT_NEAR(jobs[0].ps_traffic[0].share, 1.0 / 3, 1e-6);
}

}  // namespace
}  // namespace trainscope::diagnosis
