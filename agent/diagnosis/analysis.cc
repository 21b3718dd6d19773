#include "diagnosis/analysis.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <exception>
#include <functional>
#include <set>

namespace trainscope::diagnosis {
namespace {

std::chrono::system_clock::time_point TimeOf(double seconds) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(
          std::chrono::duration<double>(seconds)));
}

}  // namespace

std::vector<double> Instants(const Window& window) {
  std::set<double> times;
  for (const auto& [_, timeline] : window.pods) {
    for (const auto& p : timeline.points) times.insert(p.t);
  }
  return {times.begin(), times.end()};
}

Window Slice(const Window& window, double from, double to) {
  Window out;
  out.peer_roles = window.peer_roles;
  out.nodes = window.nodes;
  out.job_ps = window.job_ps;
  for (const auto& [key, timeline] : window.pods) {
    PodTimeline t;
    t.meta = timeline.meta;
    for (const auto& p : timeline.points) {
      if (p.t >= from && p.t <= to) t.points.push_back(p);
    }
    if (!t.points.empty()) out.pods.emplace(key, std::move(t));
  }
  for (const auto& [node, points] : window.node_points) {
    for (const auto& p : points) {
      if (p.t >= from && p.t <= to) out.node_points[node].push_back(p);
    }
  }
  return out;
}

Evaluation Evaluate(const Window& history, const DiagnosisSettings& settings) {
  Evaluation ev;
  try {
    const WindowStats recent =
        ComputeStats(Tail(history, settings.window_samples));
    const WindowStats baseline = ComputeStats(history);
    ev.jobs = ComputeJobTraffic(recent);
    const std::vector<JobTraffic> sustained = ComputeJobTraffic(ComputeStats(
        Tail(history, std::max(settings.window_samples,
                               settings.straggler.window_samples))));
    DetectorInput in{recent, baseline, ev.jobs, sustained};
    ev.findings = RunDetectors(in, settings);
  } catch (const std::exception& e) {
    spdlog::error("[diagnosis] evaluation over {} pods failed: {}",
                  history.pods.size(), e.what());
  }
  return ev;
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
        Evaluate(Slice(range, now - baseline_seconds, now), settings);
    engine.Update(ev.findings, TimeOf(now));
    result.jobs = std::move(ev.jobs);
    ++result.evaluations;
  }
  result.active = engine.Active();
  return result;
}

}  // namespace trainscope::diagnosis
