#pragma once

#include <memory>
#include <vector>

#include "config.h"
#include "profiler/continuous_profiler.h"
#include "profiler/profiler_service.h"
#include "trainscope/collector.h"

namespace trainscope {

// The collectors in the order they run each cycle. Adding a collector is
// one line here (no static self-registration).
// `profiler`: the on-demand profiler whose health the "profiler" collector
// reports (null when --profiler off); `continuous`: drained by the same
// collector each cycle (null when --profile-continuous off).
std::vector<CollectorPtr> MakeCollectors(
    const AgentConfig& config,
    std::shared_ptr<profiler::ProfilerService> profiler = nullptr,
    std::shared_ptr<profiler::ContinuousProfiler> continuous = nullptr);

}  // namespace trainscope
