// Snapshot-to-exposition: what one scrape of /metrics costs, by series count.
#include <benchmark/benchmark.h>
#include <prometheus/text_serializer.h>

#include <cstdio>
#include <cstdlib>

#include "cgroup/pod_families.h"
#include "exporter/collector_families.h"
#include "exporter/exporter.h"
#include "node/node_families.h"

namespace trainscope {
namespace {

std::shared_ptr<Snapshot> SyntheticSnapshot(int pods) {
  auto snap = std::make_shared<Snapshot>();
  auto list = std::make_shared<PodList>();
  for (int i = 0; i < pods; ++i) {
    PodInfo pod;
    pod.uid = "uid-" + std::to_string(i);
    pod.namespace_name = "training";
    pod.name = "ctr-worker-" + std::to_string(i);
    pod.training_job = "ctr";
    pod.role = Role::kWorker;
    pod.replica_index = i;
    pod.pod_ip = "198.18.0." + std::to_string(i % 250);
    list->push_back(pod);
    PodSample& s = snap->pod_samples[pod.uid];
    s.uid = pod.uid;
    auto fill = [i](CgroupSample& c) {
      c.cpu = {1.0 * i, 100u, 10u, 0.5, 2.0};
      c.memory = {1u << 30, 1u << 29, 1u << 28, 2u << 30, 0u};
      c.io = {123456u, 654321u};
      c.cpu_pressure = c.memory_pressure = c.io_pressure = {1.5, 0.5};
    };
    fill(s.cgroup);
    for (const char* name : {"tensorflow", "sidecar"}) {
      ContainerSample c;
      c.name = name;
      fill(c.cgroup);
      s.containers.push_back(std::move(c));
    }
    s.network = NetDevCounters{1, 2, 3, 4, 5, 6, 7, 8};
  }
  snap->pods = list;
  snap->collectors.push_back({"cgroup", Status::Ok(), 0.01});
  return snap;
}

void BM_RenderMetrics(benchmark::State& state) {
  History history(2);
  history.Push(SyntheticSnapshot(static_cast<int>(state.range(0))));
  Exporter exporter(
      history, "node-a",
      {AppendPodFamilies, AppendNodeFamilies, AppendCollectorFamilies},
      SelfStats{});
  size_t series = 0;
  for (const auto& family : exporter.Collect()) series += family.metric.size();
  // The fast serializer must write what prometheus-cpp's would, byte for
  // byte (the smoke run checks it; the golden tests pin the full output).
  const auto families = exporter.Collect();
  std::string ours;
  AppendTextFormat(families, ours);
  if (ours != prometheus::TextSerializer().Serialize(families)) {
    // A failed run, not a skipped benchmark: the smoke test must fail.
    std::fprintf(stderr, "AppendTextFormat differs from TextSerializer\n");
    std::exit(1);
  }
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = exporter.Render();
    bytes = text.size();
    benchmark::DoNotOptimize(text);
  }
  state.counters["series"] = static_cast<double>(series);
  state.counters["bytes"] = static_cast<double>(bytes);
}
// About 63 series per pod (pod and two containers): ~1k, ~10k, ~50k series.
BENCHMARK(BM_RenderMetrics)
    ->Arg(16)
    ->Arg(160)
    ->Arg(800)
    ->Unit(benchmark::kMillisecond);

// The same render with prometheus-cpp's TextSerializer (what the agent used
// before), for the before/after comparison.
void BM_RenderMetricsTextSerializer(benchmark::State& state) {
  History history(2);
  history.Push(SyntheticSnapshot(static_cast<int>(state.range(0))));
  Exporter exporter(
      history, "node-a",
      {AppendPodFamilies, AppendNodeFamilies, AppendCollectorFamilies},
      SelfStats{});
  for (auto _ : state) {
    std::string text =
        prometheus::TextSerializer().Serialize(exporter.Collect());
    benchmark::DoNotOptimize(text);
  }
}
BENCHMARK(BM_RenderMetricsTextSerializer)
    ->Arg(160)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainscope
