#pragma once

#include <string_view>

namespace trainscope {

// Metric names read by more than one component (the exporter writes them;
// the cluster view, recording rules and test suites outside the repository
// read them), defined once.

// Per worker: training steps per second from the period of its exchanges.
inline constexpr std::string_view kWorkerStepsPerSecond =
    "trainscope_worker_steps_per_second";

}  // namespace trainscope
