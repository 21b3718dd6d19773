#include "sampling/sampler.h"

#include <gtest/gtest.h>

#include <stdexcept>

namespace trainscope {
namespace {

class FakeCollector : public Collector {
 public:
  enum class Mode { kOk, kThrow, kError };
  FakeCollector(std::string name, Mode mode)
      : name_(std::move(name)), mode_(mode) {}
  std::string_view name() const override { return name_; }
  Status Collect(const CollectContext& ctx, Snapshot& out) override {
    switch (mode_) {
      case Mode::kThrow:
        throw std::runtime_error("parser exploded");
      case Mode::kError:
        return Status::Error("file missing");
      case Mode::kOk:
        out.node.cpu_count = static_cast<unsigned>(ctx.pods->size());
        return Status::Ok();
    }
    return Status::Ok();
  }

 private:
  std::string name_;
  Mode mode_;
};

TEST(SamplerTest, OneFailingCollectorNeverStopsTheOthers) {
  std::vector<CollectorPtr> collectors;
  collectors.push_back(
      std::make_unique<FakeCollector>("a", FakeCollector::Mode::kThrow));
  collectors.push_back(
      std::make_unique<FakeCollector>("b", FakeCollector::Mode::kError));
  collectors.push_back(
      std::make_unique<FakeCollector>("c", FakeCollector::Mode::kOk));
  PodTable pods;
  pods.Replace({PodInfo{}, PodInfo{}});
  History history(3);
  Sampler sampler(std::move(collectors), HostPaths{}, pods, history,
                  std::chrono::milliseconds(1000));
  auto snap = sampler.RunOnce();
  ASSERT_EQ(snap->collectors.size(), 3u);
  EXPECT_EQ(snap->collectors[0].status.code(), Status::Code::kError);
  EXPECT_NE(snap->collectors[0].status.message().find("parser exploded"),
            std::string::npos);
  EXPECT_EQ(snap->collectors[1].status.message(), "file missing");
  EXPECT_TRUE(snap->collectors[2].status.ok());
  EXPECT_EQ(snap->node.cpu_count, 2u);
  EXPECT_EQ(history.Latest(), snap);
  EXPECT_EQ(sampler.cycles_total(), 1u);
}

// Records what the context carried.
class ContextProbe : public Collector {
 public:
  std::string_view name() const override { return "probe"; }
  Status Collect(const CollectContext& ctx, Snapshot&) override {
    pods = ctx.pods;
    peer_pods = ctx.peer_pods;
    return Status::Ok();
  }
  std::shared_ptr<const PodList> pods, peer_pods;
};

TEST(SamplerTest, HandsThePeerTableToCollectorsButNotToTheSnapshot) {
  PodInfo local, remote;
  local.uid = "u-local";
  remote.uid = "u-remote";
  PodTable pods, peers;
  pods.Replace({local});
  peers.Replace({remote});
  History history(3);
  for (bool with_peers : {false, true}) {
    SCOPED_TRACE(with_peers);
    auto probe = std::make_unique<ContextProbe>();
    ContextProbe* seen = probe.get();
    std::vector<CollectorPtr> collectors;
    collectors.push_back(std::move(probe));
    Sampler sampler(std::move(collectors), HostPaths{}, pods, history,
                    std::chrono::milliseconds(1000));
    if (with_peers) sampler.SetPeerPods(&peers);
    auto snap = sampler.RunOnce();
    ASSERT_NE(seen->pods, nullptr);
    EXPECT_EQ(seen->pods->at(0).uid, "u-local");
    if (with_peers) {
      ASSERT_NE(seen->peer_pods, nullptr);
      EXPECT_EQ(seen->peer_pods->at(0).uid, "u-remote");
    } else {
      EXPECT_EQ(seen->peer_pods, nullptr);
    }
    // The snapshot's pods (what gets pod series) stay the node's pods.
    ASSERT_EQ(snap->pods->size(), 1u);
    EXPECT_EQ(snap->pods->at(0).uid, "u-local");
  }
}

TEST(SamplerTest, SamplesOnItsOwnClockAndStopsPromptly) {
  PodTable pods;
  History history(100);
  std::vector<CollectorPtr> collectors;
  collectors.push_back(
      std::make_unique<FakeCollector>("c", FakeCollector::Mode::kOk));
  Sampler sampler(std::move(collectors), HostPaths{}, pods, history,
                  std::chrono::milliseconds(20));
  sampler.Start();
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (sampler.cycles_total() < 3 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_GE(sampler.cycles_total(), 3u);
  auto stop_start = std::chrono::steady_clock::now();
  sampler.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - stop_start,
            std::chrono::seconds(1));
  auto window = history.Window(2);
  ASSERT_EQ(window.size(), 2u);
  EXPECT_LT(window[0]->sequence, window[1]->sequence);
}

TEST(HistoryTest, KeepsTheNewestWithinCapacity) {
  History history(2);
  EXPECT_EQ(history.Latest(), nullptr);
  for (uint64_t i = 1; i <= 3; ++i) {
    auto s = std::make_shared<Snapshot>();
    s->sequence = i;
    history.Push(s);
  }
  auto window = history.Window(10);
  ASSERT_EQ(window.size(), 2u);
  EXPECT_EQ(window[0]->sequence, 2u);
  EXPECT_EQ(window[1]->sequence, 3u);
}

// A snapshot with everything the collectors fill for one pod.
std::shared_ptr<Snapshot> FullSnapshot(uint64_t i) {
  auto s = std::make_shared<Snapshot>();
  s->sequence = i;
  s->taken_at = std::chrono::system_clock::time_point() +
                std::chrono::seconds(1'000'000'000 + 5 * i);
  PodInfo pod;
  pod.uid = "u";
  pod.name = "ctr-worker-0";
  pod.namespace_name = "training";
  s->pods = std::make_shared<const PodList>(PodList{pod});
  PodSample& p = s->pod_samples["u"];
  p.uid = "u";
  p.cgroup_path = "kubepods.slice/kubepods-podu.slice";
  p.cgroup.cpu.usage_seconds = 2.5 * static_cast<double>(i);
  p.cgroup.memory.working_set_bytes = 1 << 20;
  p.cgroup.io_pressure.some_seconds = 0.1 * static_cast<double>(i);
  p.pids = {42};
  p.network = NetDevCounters{.receive_bytes = 1000 * i};
  ContainerSample& c = p.containers.emplace_back();
  c.name = "tensorflow";
  c.id = std::string(64, 'a');
  c.cgroup_path = p.cgroup_path + "/cri-containerd-aaa.scope";
  c.cgroup.cpu.usage_seconds = 2.0 * static_cast<double>(i);
  PeerTrafficSample peer;
  peer.pod_uid = "u";
  peer.peer_pod = "ctr-ps-0";
  peer.receive_bytes = 500 * i;
  s->peer_traffic.push_back(peer);
  GpuPodUsage gpu;
  gpu.pod_uid = "u";
  gpu.utilization_ratio = 0.5;
  s->gpu_pods.push_back(gpu);
  s->node.cpu_count = 8;
  return s;
}

TEST(HistoryTest, OlderSnapshotsKeepPodLevelDataWithoutContainerDetail) {
  History history(3);
  const auto first = FullSnapshot(1);
  history.Push(first);
  history.Push(FullSnapshot(2));
  history.Push(FullSnapshot(3));

  const auto window = history.Window(3);
  ASSERT_EQ(window.size(), 3u);
  for (size_t i = 0; i < 2; ++i) {
    const Snapshot& old = *window[i];
    EXPECT_EQ(old.sequence, i + 1);
    EXPECT_EQ(old.taken_at, FullSnapshot(i + 1)->taken_at);
    const PodSample& p = old.pod_samples.at("u");
    EXPECT_TRUE(p.containers.empty());
    EXPECT_TRUE(p.pids.empty());
    EXPECT_TRUE(p.cgroup_path.empty());
    EXPECT_EQ(p.cgroup.cpu.usage_seconds, 2.5 * static_cast<double>(i + 1));
    EXPECT_EQ(p.cgroup.memory.working_set_bytes, 1u << 20);
    EXPECT_EQ(p.cgroup.io_pressure.some_seconds,
              0.1 * static_cast<double>(i + 1));
    ASSERT_TRUE(p.network);
    EXPECT_EQ(p.network->receive_bytes, 1000 * (i + 1));
    ASSERT_EQ(old.peer_traffic.size(), 1u);
    EXPECT_EQ(old.peer_traffic[0].peer_pod, "ctr-ps-0");
    ASSERT_EQ(old.gpu_pods.size(), 1u);
    EXPECT_EQ(old.gpu_pods[0].utilization_ratio, 0.5);
    EXPECT_EQ(old.node.cpu_count, 8u);
    ASSERT_TRUE(old.pods);
    EXPECT_EQ(old.pods->at(0).name, "ctr-worker-0");
  }
  // The newest is whole, and a reader still holding an older snapshot keeps
  // what it took.
  EXPECT_EQ(history.Latest()->pod_samples.at("u").containers.size(), 1u);
  EXPECT_EQ(history.Latest()->pod_samples.at("u").pids, std::vector<int>{42});
  EXPECT_EQ(first->pod_samples.at("u").containers.size(), 1u);
}

}  // namespace
}  // namespace trainscope
