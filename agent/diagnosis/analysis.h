#pragma once

#include <chrono>
#include <vector>

#include "diagnosis/detectors.h"
#include "diagnosis/engine.h"
#include "diagnosis/exchange_quiet.h"
#include "diagnosis/headroom.h"
#include "diagnosis/training_speed.h"

namespace trainscope::diagnosis {

struct Evaluation {
  std::vector<Finding> findings;
  std::vector<JobTraffic> jobs;       // PS traffic of the evaluation window
  std::vector<JobSpeed> speeds;       // step rates of the evaluation window
  std::vector<JobHeadroom> headroom;  // scaling forecast of the window
};

// One evaluation: the detectors over the last `window_samples` instants of
// `history`, with the whole of `history` as the baseline. Never throws: a
// failing detector is logged with its name and skipped. `memory` (the node
// view's, may be null) anchors quiet tails older than the history.
Evaluation Evaluate(const Window& history, const DiagnosisSettings& settings,
                    const ExchangeMemory* memory = nullptr);

// The same evaluation as if `history` held only its points in `baseline`,
// whose instants are instants[0, end): read in place (the replay's step).
Evaluation EvaluateAt(const Window& history,
                      const std::vector<double>& instants, size_t end,
                      TimeRange baseline, const DiagnosisSettings& settings,
                      const ExchangeMemory* memory = nullptr);

struct ReplayResult {
  std::vector<Diagnosis> active;
  std::vector<JobTraffic> jobs;       // of the last evaluation
  std::vector<JobSpeed> speeds;       // of the last evaluation
  std::vector<JobHeadroom> headroom;  // of the last evaluation
  size_t evaluations = 0;
};

// The cluster view: slides the evaluation window over a recorded range one
// instant at a time and feeds an engine, as the agent would have live. The
// result is what is active at the end of the range. `baseline_seconds`
// bounds the baseline to the recent past, as the agent's history does.
ReplayResult Replay(const Window& range, const DiagnosisSettings& settings,
                    double baseline_seconds = 600);

}  // namespace trainscope::diagnosis
