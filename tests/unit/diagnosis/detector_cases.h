#pragma once

#include <functional>
#include <string>
#include <vector>

#include "diagnosis/detectors.h"
#include "synthetic.h"

namespace trainscope::diagnosis::testing {

struct Expected {
  std::string pod;
  Finding::Level level;
};

// One table row: a synthetic window and the findings one kind must give.
struct DetectorCase {
  const char* name;
  std::function<Window()> window;
  std::vector<Expected> expected;
};

// Runs every detector over the window (as one evaluation does) and keeps the
// findings of `kind`.
inline std::vector<Finding> FindingsOf(std::string_view kind, const Window& w,
                                       const DiagnosisSettings& s = {}) {
  WindowStats stats = ComputeStats(w);
  auto jobs = ComputeJobTraffic(stats);
  DetectorInput in{stats, stats, jobs, jobs};
  std::vector<Finding> out;
  for (auto& f : RunDetectors(in, s)) {
    if (f.diagnosis.kind == kind) out.push_back(std::move(f));
  }
  return out;
}

// A PS job: `workers` workers, each exchanging ps_rates[i] bytes/s (half each
// way) with PS i. The PS also report their own side.
inline void PsJob(WindowBuilder& b, const std::vector<double>& ps_rates,
                  int workers) {
  for (size_t i = 0; i < ps_rates.size(); ++i) {
    b.Pod("ctr-ps-" + std::to_string(i), Role::kPs);
  }
  for (int w = 0; w < workers; ++w) {
    b.Pod("ctr-worker-" + std::to_string(w), Role::kWorker);
    for (size_t i = 0; i < ps_rates.size(); ++i) {
      b.Peer(Key("ctr-ps-" + std::to_string(i)), Role::kPs, ps_rates[i] / 2,
             ps_rates[i] / 2);
    }
  }
}

inline std::string DescribeLevel(Finding::Level l) {
  return l == Finding::Level::kEnter   ? "enter"
         : l == Finding::Level::kEvent ? "event"
                                       : "hold";
}

}  // namespace trainscope::diagnosis::testing
