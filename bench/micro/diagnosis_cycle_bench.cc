// What the diagnosis costs the agent every cycle on a 110-pod node (11 jobs
// of 1 PS + 9 workers, as bench/macro's node) once its 60-snapshot history
// is full: the snapshots turned into a window, then one evaluation.
#include <benchmark/benchmark.h>

#include <memory>
#include <string>
#include <vector>

#include "diagnosis/runner.h"
#include "diagnosis/snapshot_window.h"

namespace trainscope::diagnosis {
namespace {

constexpr int kJobs = 11;
constexpr int kPodsPerJob = 10;  // 1 PS + 9 workers
constexpr int kSnapshots = 60;

PodList NodePods() {
  PodList pods;
  for (int j = 0; j < kJobs; ++j) {
    for (int k = 0; k < kPodsPerJob; ++k) {
      PodInfo p;
      p.namespace_name = "training";
      p.name = "j" + std::to_string(j) + (k == 0 ? "-ps-0" : "-worker-") +
               (k == 0 ? "" : std::to_string(k - 1));
      p.uid = "uid-" + p.name;
      p.training_job = "j" + std::to_string(j);
      p.role = k == 0 ? Role::kPs : Role::kWorker;
      p.spec_cpu_limit_cores = 1.0;
      pods.push_back(p);
    }
  }
  return pods;
}

std::shared_ptr<const Snapshot> NodeSnapshot(
    int i, const std::shared_ptr<const PodList>& pods) {
  auto s = std::make_shared<Snapshot>();
  s->sequence = static_cast<uint64_t>(i + 1);
  s->taken_at = std::chrono::system_clock::time_point() +
                std::chrono::seconds(1'800'000'000 + 5 * i);
  s->pods = pods;
  const double t = 5.0 * i;
  for (const auto& pod : *pods) {
    PodSample& p = s->pod_samples[pod.uid];
    p.uid = pod.uid;
    p.cgroup.cpu.usage_seconds = 0.3 * t;
    p.cgroup.cpu.periods = static_cast<uint64_t>(10 * t);
    p.cgroup.cpu.throttled_periods = 0;
    p.cgroup.cpu.limit_cores = 1.0;
    p.cgroup.memory.working_set_bytes = 100u << 20;
    p.cgroup.io.read_bytes = 0;
    p.cgroup.io_pressure.some_seconds = 0;
    p.cgroup.memory_pressure.some_seconds = 0;
    p.network =
        NetDevCounters{.receive_bytes = static_cast<uint64_t>(1e4 * t),
                       .transmit_bytes = static_cast<uint64_t>(1e4 * t)};
  }
  for (int j = 0; j < kJobs; ++j) {
    const PodInfo& ps = (*pods)[j * kPodsPerJob];
    for (int k = 1; k < kPodsPerJob; ++k) {
      const PodInfo& worker = (*pods)[j * kPodsPerJob + k];
      for (const auto& [from, to] : {std::pair{&worker, &ps}, {&ps, &worker}}) {
        PeerTrafficSample pt;
        pt.pod_uid = from->uid;
        pt.peer_uid = to->uid;
        pt.peer_namespace = to->namespace_name;
        pt.peer_pod = to->name;
        pt.peer_role = to->role;
        pt.receive_bytes = static_cast<uint64_t>(1e4 * t);
        pt.transmit_bytes = static_cast<uint64_t>(1e4 * t);
        s->peer_traffic.push_back(pt);
      }
    }
  }
  s->node.cpu_count = 16;
  return s;
}

const std::vector<std::shared_ptr<const Snapshot>>& History() {
  static const auto history = [] {
    auto pods = std::make_shared<const PodList>(NodePods());
    std::vector<std::shared_ptr<const Snapshot>> h;
    for (int i = 0; i < kSnapshots; ++i) h.push_back(NodeSnapshot(i, pods));
    return h;
  }();
  return history;
}

void BM_WindowFromSnapshots(benchmark::State& state) {
  for (auto _ : state) {
    Window w = WindowFromSnapshots(History(), "node-a");
    benchmark::DoNotOptimize(w);
  }
  state.counters["pods"] = kJobs * kPodsPerJob;
  state.counters["snapshots"] = kSnapshots;
}
BENCHMARK(BM_WindowFromSnapshots)->Unit(benchmark::kMillisecond);

// The agent's after-cycle hook: DiagnosisRunner::Update over the history,
// one new snapshot per cycle as in the agent.
void BM_DiagnosisCycle(benchmark::State& state) {
  auto pods = std::make_shared<const PodList>(NodePods());
  std::vector<std::shared_ptr<const Snapshot>> history = History();
  DiagnosisRunner runner("node-a");
  int next = kSnapshots;
  for (auto _ : state) {
    state.PauseTiming();
    history.erase(history.begin());
    history.push_back(NodeSnapshot(next++, pods));
    state.ResumeTiming();
    runner.Update(history);
  }
  state.counters["pods"] = kJobs * kPodsPerJob;
  state.counters["snapshots"] = kSnapshots;
}
BENCHMARK(BM_DiagnosisCycle)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainscope::diagnosis
