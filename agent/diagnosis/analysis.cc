#include "diagnosis/analysis.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <exception>

namespace trainscope::diagnosis {
namespace {

std::chrono::system_clock::time_point TimeOf(double seconds) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(seconds)));
}

}  // namespace

Evaluation EvaluateAt(const Window& history,
                      const std::vector<double>& instants, size_t end,
                      TimeRange baseline, const DiagnosisSettings& settings,
                      const ExchangeMemory* memory) {
  Evaluation ev;
  try {
    auto last = [&](size_t count) {
      return LastInstants(instants, end, count, baseline);
    };
    const WindowStats recent =
        ComputeStats(history, last(settings.window_samples));
    ev.jobs = ComputeJobTraffic(recent);
    ev.speeds = ComputeJobSpeeds(recent);
    ev.headroom = ComputeHeadroom(recent, ev.jobs, ev.speeds);
    const std::vector<JobTraffic> sustained = ComputeJobTraffic(ComputeStats(
        history, last(std::max(settings.window_samples,
                               settings.straggler.window_samples))));
    DetectorInput in{recent, LazyStats([&history, baseline, memory] {
                       WindowStats stats = ComputeStats(history, baseline);
                       if (memory) memory->Anchor(stats);
                       return stats;
                     }),
                     ev.jobs, sustained, &ev.headroom};
    ev.findings = RunDetectors(in, settings);
  } catch (const std::exception& e) {
    spdlog::error("[diagnosis] evaluation over {} pods failed: {}",
                  history.pods.size(), e.what());
  }
  return ev;
}

Evaluation Evaluate(const Window& history, const DiagnosisSettings& settings,
                    const ExchangeMemory* memory) {
  const std::vector<double> instants = Instants(history);
  return EvaluateAt(history, instants, instants.size(), TimeRange{}, settings,
                    memory);
}

ReplayResult Replay(const Window& range, const DiagnosisSettings& settings,
                    double baseline_seconds) {
  ReplayResult result;
  Engine engine(settings.engine);
  const std::vector<double> instants = Instants(range);
  const size_t w = std::max<size_t>(settings.window_samples, 2);
  for (size_t i = w - 1; i < instants.size(); ++i) {
    const double now = instants[i];
    Evaluation ev =
        EvaluateAt(range, instants, i + 1,
                   TimeRange{now - baseline_seconds, now}, settings);
    engine.Update(ev.findings, TimeOf(now));
    result.jobs = std::move(ev.jobs);
    result.speeds = std::move(ev.speeds);
    result.headroom = std::move(ev.headroom);
    ++result.evaluations;
  }
  result.active = engine.Active();
  WithdrawStalledRates(result.active, result.speeds);
  return result;
}

}  // namespace trainscope::diagnosis
