// The diagnosis detectors over a 10-minute window of 200 pods (120 samples at
// the default 5 s interval): the window statistics, each detector on its
// own, and one whole evaluation as the agent runs it every cycle.
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "diagnosis/analysis.h"
#include "diagnosis/detectors.h"
#include "diagnosis/ps_share.h"
#include "diagnosis/window.h"

namespace trainscope::diagnosis {
namespace {

constexpr int kPods = 200;
constexpr int kPodsPerJob = 50;  // 2 PS + 48 workers
constexpr int kSamples = 120;
constexpr double kInterval = 5.0;

std::string PodName(int i) {
  return "job" + std::to_string(i / kPodsPerJob) + "-" +
         (i % kPodsPerJob < 2 ? "ps-" : "worker-") + std::to_string(i);
}

// Four jobs; every worker talks to its job's two PS, one PS gets most of
// the bytes, one worker is slow, some pods are throttled or near their
// memory limit, so every detector has work (and findings) to produce.
Window SyntheticWindow() {
  Window w;
  w.nodes["node-a"] = {16.0, 12.5e9};
  for (int i = 0; i < kPods; ++i) {
    const int job = i / kPodsPerJob;
    const bool ps = i % kPodsPerJob < 2;
    PodTimeline tl;
    tl.meta.namespace_name = "training";
    tl.meta.pod = PodName(i);
    tl.meta.training_job = "job" + std::to_string(job);
    tl.meta.role = ps ? Role::kPs : Role::kWorker;
    tl.meta.node = "node-a";
    tl.meta.spec_cpu_limit_cores = 4.0;
    tl.meta.spec_memory_limit_bytes = 8e9;
    const double rate = ps ? (i % kPodsPerJob == 0 ? 9e7 : 1e7)
                           : (i % kPodsPerJob == 7 ? 2e6 : 5e6);
    for (int s = 0; s < kSamples; ++s) {
      const double t = s * kInterval;
      PodPoint p;
      p.t = t;
      p.instance = "uid-" + std::to_string(i);
      p.cpu_usage_seconds = t * (ps ? 3.8 : 2.0);
      p.cpu_periods = t * 10;
      p.cpu_throttled_periods = t * (i % 10 == 3 ? 4 : 0.1);
      p.cpu_limit_cores = 4.0;
      p.memory_working_set_bytes = i % 17 == 5 ? 7.8e9 : 3e9;
      p.memory_limit_bytes = 8e9;
      p.oom_events = 0;
      p.io_read_bytes = t * 1e6;
      p.io_pressure_some_seconds = t * (i % 13 == 1 ? 0.4 : 0.01);
      p.memory_pressure_some_seconds = t * 0.01;
      p.network_receive_bytes = t * rate;
      p.network_transmit_bytes = t * rate;
      p.gpu_utilization_ratio = ps ? 0.0 : (i % 11 == 2 ? 0.1 : 0.9);
      p.gpus = ps ? 0 : 1;
      const int first = job * kPodsPerJob;
      if (ps) {
        for (int k = first + 2; k < first + kPodsPerJob; ++k) {
          p.peers[PodKey("training", PodName(k))] = {t * rate / 48,
                                                     t * rate / 48};
        }
      } else {
        p.peers[PodKey("training", PodName(first))] = {t * rate * 0.9,
                                                       t * rate * 0.9};
        p.peers[PodKey("training", PodName(first + 1))] = {t * rate * 0.1,
                                                           t * rate * 0.1};
      }
      tl.points.push_back(std::move(p));
    }
    w.peer_roles[PodKey("training", tl.meta.pod)] = tl.meta.role;
    w.pods[PodKey("training", tl.meta.pod)] = std::move(tl);
  }
  for (int s = 0; s < kSamples; ++s) {
    w.node_points["node-a"].push_back(
        {s * kInterval, s * kInterval * 1e9, s * kInterval * 1e9});
  }
  return w;
}

const Window& TheWindow() {
  static const Window w = SyntheticWindow();
  return w;
}

// Rates and levels of the 10-minute baseline and of the evaluation window.
void BM_WindowStats(benchmark::State& state) {
  const DiagnosisSettings settings;
  for (auto _ : state) {
    WindowStats recent =
        ComputeStats(Tail(TheWindow(), settings.window_samples));
    WindowStats baseline = ComputeStats(TheWindow());
    auto jobs = ComputeJobTraffic(recent);
    benchmark::DoNotOptimize(baseline);
    benchmark::DoNotOptimize(jobs);
  }
  state.counters["pods"] = kPods;
  state.counters["samples"] = kSamples;
}
BENCHMARK(BM_WindowStats)->Unit(benchmark::kMillisecond);

struct Inputs {
  WindowStats recent;
  WindowStats baseline;
  std::vector<JobTraffic> jobs;
};

const Inputs& TheInputs() {
  static const Inputs in = [] {
    const DiagnosisSettings settings;
    Inputs i;
    i.recent = ComputeStats(Tail(TheWindow(), settings.window_samples));
    i.baseline = ComputeStats(TheWindow());
    i.jobs = ComputeJobTraffic(i.recent);
    return i;
  }();
  return in;
}

template <typename Fn>
void RunDetector(benchmark::State& state, Fn detect) {
  const Inputs& inputs = TheInputs();
  const DetectorInput in{inputs.recent, inputs.baseline, inputs.jobs,
                         inputs.jobs};
  const DiagnosisSettings settings;
  size_t findings = 0;
  for (auto _ : state) {
    std::vector<Finding> out;
    detect(in, settings, out);
    findings = out.size();
    benchmark::DoNotOptimize(out);
  }
  state.counters["pods"] = kPods;
  state.counters["findings"] = static_cast<double>(findings);
}

using Out = std::vector<Finding>;
using S = DiagnosisSettings;

void BM_DetectHotParameterServer(benchmark::State& state) {
  RunDetector(state, [](const DetectorInput& in, const S& s, Out& out) {
    DetectHotParameterServer(in, s.hot_ps, s.headroom, out);
  });
}
void BM_DetectPsCpuSaturated(benchmark::State& state) {
  RunDetector(state, [](const DetectorInput& in, const S& s, Out& out) {
    DetectPsCpuSaturated(in, s.ps_cpu, s.headroom, out);
  });
}
void BM_DetectStragglerWorker(benchmark::State& state) {
  RunDetector(state, [](const DetectorInput& in, const S& s, Out& out) {
    DetectStragglerWorker(in, s.straggler, s, out);
  });
}
void BM_DetectCpuThrottled(benchmark::State& state) {
  RunDetector(state, [](const DetectorInput& in, const S& s, Out& out) {
    DetectCpuThrottled(in, s.throttle, out);
  });
}
void BM_DetectNetworkSaturated(benchmark::State& state) {
  RunDetector(state, [](const DetectorInput& in, const S& s, Out& out) {
    DetectNetworkSaturated(in, s.network, out);
  });
}
void BM_DetectMemoryPressure(benchmark::State& state) {
  RunDetector(state, [](const DetectorInput& in, const S& s, Out& out) {
    DetectMemoryPressure(in, s.memory, out);
  });
}
void BM_DetectInputIoBound(benchmark::State& state) {
  RunDetector(state, [](const DetectorInput& in, const S& s, Out& out) {
    DetectInputIoBound(in, s.input_io, out);
  });
}
void BM_DetectGpuUnderutilized(benchmark::State& state) {
  RunDetector(state, [](const DetectorInput& in, const S& s, Out& out) {
    DetectGpuUnderutilized(in, s.gpu, out);
  });
}
BENCHMARK(BM_DetectHotParameterServer)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DetectPsCpuSaturated)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DetectStragglerWorker)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DetectCpuThrottled)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DetectNetworkSaturated)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DetectMemoryPressure)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DetectInputIoBound)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DetectGpuUnderutilized)->Unit(benchmark::kMicrosecond);

// The whole per-cycle evaluation: statistics, PS traffic and all detectors.
void BM_Evaluate(benchmark::State& state) {
  const DiagnosisSettings settings;
  size_t findings = 0;
  for (auto _ : state) {
    Evaluation ev = Evaluate(TheWindow(), settings);
    findings = ev.findings.size();
    benchmark::DoNotOptimize(ev);
  }
  state.counters["pods"] = kPods;
  state.counters["findings"] = static_cast<double>(findings);
}
BENCHMARK(BM_Evaluate)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainscope::diagnosis
