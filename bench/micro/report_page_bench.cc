// Report JSON to HTML page (GET / and `trainscope report --html`): the cost
// of one render by job size, nodes and whether edges are per worker.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>

#include "report_page/page.h"

namespace trainscope {
namespace {

// One job as the agent reports it, ps-0 hot, pods spread over `nodes`.
nlohmann::json Report(int ps, int workers, int nodes) {
  nlohmann::json job = {{"namespace", "training"},
                        {"training_job", "ctr"},
                        {"measured_from", "workers"}};
  const double total = 80e6;
  auto share = [&](int i) { return i == 0 ? 0.6 : 0.4 / (ps - 1); };
  auto node = [&](int i) { return "node-" + std::to_string(i % nodes); };
  for (int i = 0; i < ps; ++i) {
    const std::string pod = "ctr-ps-" + std::to_string(i);
    job["ps"].push_back(pod);
    job["ps_traffic_share"][pod] = share(i);
    job["ps_bytes_per_second"][pod] = share(i) * total;
    job["pod_nodes"][pod] = node(i);
  }
  for (int w = 0; w < workers; ++w) {
    const std::string pod = "ctr-worker-" + std::to_string(w);
    job["workers"].push_back(pod);
    job["worker_ps_bytes_per_second"][pod] = total / workers;
    job["pod_nodes"][pod] = node(ps + w);
    for (int i = 0; i < ps; ++i) {
      job["links"].push_back(
          {{"worker", pod},
           {"ps", "ctr-ps-" + std::to_string(i)},
           {"bytes_per_second", total / workers * share(i)}});
    }
  }
  nlohmann::json hot = {
      {"kind", "hot_parameter_server"},
      {"severity", "warning"},
      {"namespace", "training"},
      {"training_job", "ctr"},
      {"pod", "ctr-ps-0"},
      {"since", "2026-11-23T16:00:00Z"},
      {"summary", "ctr-ps-0 carries 60% of job ctr's PS traffic."},
      {"evidence", {{"share", 0.6}}},
      {"recommendations", {"Partition."}}};
  return {{"generated_at", "2026-11-23T16:00:00Z"},
          {"node", nodes > 1 ? "cluster" : "node-0"},
          {"diagnoses", {hot}},
          {"jobs", {job}}};
}

void BM_ReportPage(benchmark::State& state) {
  const auto report =
      Report(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
             static_cast<int>(state.range(2)));
  size_t bytes = 0;
  for (auto _ : state) {
    std::string html = page::RenderReportPage(report, {});
    bytes = html.size();
    benchmark::DoNotOptimize(html);
  }
  state.counters["page_bytes"] = static_cast<double>(bytes);
}
// {PS, workers, nodes}: the field's small job, a 200-worker job on one node
// (bundled edges past 600 links) and over 10 nodes, and a summarised job.
BENCHMARK(BM_ReportPage)
    ->Args({4, 6, 1})
    ->Args({20, 200, 1})
    ->Args({20, 200, 10})
    ->Args({40, 1000, 20})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace trainscope
