// The agent's per-cycle work on a synthetic node of N pods, for a
// deterministic cost count (bench/cycle/check.py runs it under callgrind,
// which also traces its syscalls; docs/performance.md, "Per-cycle cost
// check"). Each measured cycle
// is what the agent does every --interval: the registry's collectors over
// the host files (Sampler::RunOnce), the diagnosis update after it, and one
// /metrics render. Fixture writes between cycles are outside the
// measurement.
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <unistd.h>
#include <valgrind/callgrind.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <memory>
#include <string>
#include <string_view>

#include "collector_registry.h"
#include "config.h"
#include "diagnosis/runner.h"
#include "exporter/diagnosis_families.h"
#include "exporter/exporter.h"
#include "exporter/goodput_families.h"
#include "exporter/headroom_families.h"
#include "exporter/ps_share_families.h"
#include "flows/flows_options.h"
#include "sampling/history.h"
#include "sampling/sampler.h"
#include "synthetic_node.h"
#include "trainscope/strict_number.h"

namespace trainscope::cycle_bench {
namespace {

// As the agent (agent.cc): the diagnosis reads at most 60 samples.
constexpr size_t kDiagnosisHistorySamples = 60;

// Paths no host has: check.py finds these access(2) calls in valgrind's
// syscall trace and counts only the syscalls between them.
constexpr const char* kBeginMarker = "/trainscope-cycle-bench:begin";
constexpr const char* kEndMarker = "/trainscope-cycle-bench:end";

struct Options {
  int pods = 110;
  int cycles = 12;
  int warmup = 2;
};

// The flags' numbers, parsed as the agent parses its own (no sign, no hex,
// no trailing junk), between `min` and 100,000.
bool ParseInt(std::string_view text, int min, int* out) {
  const auto value = ParseWholeNumber(text);
  if (!value || *value < static_cast<uint64_t>(min) || *value > 100000) {
    return false;
  }
  *out = static_cast<int>(*value);
  return true;
}

bool ParseOptions(int argc, char** argv, Options* options) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--pods" && has_value) {
      if (!ParseInt(argv[++i], 1, &options->pods)) return false;
    } else if (arg == "--cycles" && has_value) {
      if (!ParseInt(argv[++i], 0, &options->cycles)) return false;
    } else if (arg == "--warmup" && has_value) {
      if (!ParseInt(argv[++i], 0, &options->warmup)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// The collectors the agent runs with flows off (flows needs BPF or a
// capture) and without the GPU collector: with no NVML it retries the open
// once a minute of wall time, which would make the count depend on how
// long valgrind takes.
std::vector<CollectorPtr> NodeCollectors(const HostPaths& host) {
  AgentConfig config;
  config.host = host;
  config.collectors.Mutable<FlowsOptions>().mode = FlowsMode::kOff;
  std::vector<CollectorPtr> collectors = MakeCollectors(config);
  std::erase_if(collectors,
                [](const CollectorPtr& c) { return c->name() == "gpu"; });
  return collectors;
}

// The agent's /metrics sections (Agent::ExportSections) less the HTTP
// server's and the peer-pod watch's, which have no server or watch here.
std::vector<FamilySection> Sections(const diagnosis::DiagnosisRunner& runner) {
  std::vector<FamilySection> sections = CollectorSections();
  sections.push_back(PsShareSection(runner));
  sections.push_back(HeadroomSection(runner));
  sections.push_back(GoodputSection(runner));
  sections.push_back([&runner](const ExportContext& ctx,
                               std::vector<prometheus::MetricFamily>& out) {
    AppendDiagnosisFamilies(ctx, runner.Active(), out);
  });
  return sections;
}

// Every pod must have been sampled by every collector, or the count would
// measure a broken fixture rather than the agent.
bool CheckCycle(const Snapshot& snapshot, size_t pods) {
  bool ok = true;
  for (const CollectorRun& run : snapshot.collectors) {
    if (!run.status.ok()) {
      std::fprintf(stderr, "collector %s: %s\n", run.name.c_str(),
                   run.status.message().c_str());
      ok = false;
    }
  }
  size_t with_network = 0, with_processes = 0;
  for (const auto& [uid, sample] : snapshot.pod_samples) {
    with_network += sample.network.has_value();
    with_processes += sample.processes.has_value();
  }
  if (snapshot.pod_samples.size() != pods || with_network != pods ||
      with_processes != pods) {
    std::fprintf(stderr,
                 "fixture not fully read: %zu of %zu pods sampled, %zu with "
                 "network, %zu with process states\n",
                 snapshot.pod_samples.size(), pods, with_network,
                 with_processes);
    ok = false;
  }
  return ok;
}

// The fixture keeps about 23 files a pod open (CounterFiles); the agent's
// collectors want their own descriptors on top. Raised toward the hard limit
// as a daemon's service unit would, so a low default `ulimit -n` does not
// change what is measured.
void RaiseFileLimit(int pods) {
  const rlim_t wanted = static_cast<rlim_t>(pods) * 100 + 4096;
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur >= wanted) return;
  rl.rlim_cur =
      rl.rlim_max == RLIM_INFINITY ? wanted : std::min(wanted, rl.rlim_max);
  ::setrlimit(RLIMIT_NOFILE, &rl);
}

int Run(const Options& options) {
  RaiseFileLimit(options.pods);
  SyntheticNode node(options.pods);
  PodTable pods;
  pods.Replace(node.pods());
  History history(kDiagnosisHistorySamples);
  diagnosis::DiagnosisRunner runner("node-a");
  Sampler sampler(NodeCollectors(node.host()), node.host(), pods, history,
                  std::chrono::seconds(5));
  sampler.SetAfterCycle([&] {
    runner.Update(history.Window(
        std::min<size_t>(history.capacity(), kDiagnosisHistorySamples)));
  });
  Exporter exporter(
      history, "node-a", Sections(runner),
      SelfStats{.discovery_mode = "apiserver",
                .discovery = [] { return DiscoveryStats{.ready = true}; },
                .sampler_cpu_seconds =
                    [&] { return sampler.cycle_cpu_seconds_total(); },
                .sampler_cycles = [&] { return sampler.cycles_total(); }});

  size_t bytes = 0;
  double seconds = 0;
  for (int i = 0; i < options.warmup + options.cycles; ++i) {
    const bool measured = i >= options.warmup;
    if (i > 0) node.Advance();
    const auto start = std::chrono::steady_clock::now();
    if (measured) {
      ::access(kBeginMarker, F_OK);
      CALLGRIND_START_INSTRUMENTATION;
    }
    auto snapshot = sampler.RunOnce();
    const std::string text = exporter.Render();
    if (measured) {
      CALLGRIND_STOP_INSTRUMENTATION;
      ::access(kEndMarker, F_OK);
      seconds += std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count();
    }
    if (!CheckCycle(*snapshot, node.pods().size())) return 1;
    bytes = text.size();
  }
  std::printf(
      "{\"pods\": %d, \"cycles\": %d, \"warmup\": %d, \"metrics_bytes\": %zu, "
      "\"wall_seconds_per_cycle\": %.6f}\n",
      options.pods, options.cycles, options.warmup, bytes,
      options.cycles > 0 ? seconds / options.cycles : 0.0);
  return 0;
}

}  // namespace
}  // namespace trainscope::cycle_bench

int main(int argc, char** argv) {
  using trainscope::cycle_bench::Options;
  Options options;
  if (!trainscope::cycle_bench::ParseOptions(argc, argv, &options)) {
    std::fprintf(stderr,
                 "usage: %s [--pods N (110)] [--cycles C (12)] "
                 "[--warmup W (2)]\n",
                 argv[0]);
    return 2;
  }
  // Only problems are logged: a log line is work the count should not see.
  spdlog::set_level(spdlog::level::warn);
  try {
    return trainscope::cycle_bench::Run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cycle bench: %s\n", e.what());
    return 1;
  }
}
