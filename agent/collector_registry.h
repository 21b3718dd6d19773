#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "config.h"
#include "exposition/export_context.h"
#include "profiler/continuous_profiler.h"
#include "profiler/profiler_service.h"
#include "trainscope/collector.h"
#include "trainscope/collector_flags.h"

namespace trainscope {

// The profilers the agent runs (null when their flags turn them off): the
// "profiler" collector reports the on-demand one's health and drains the
// continuous one each cycle.
struct ProfilerHandles {
  std::shared_ptr<profiler::ProfilerService> on_demand;
  std::shared_ptr<profiler::ContinuousProfiler> continuous;
};

// The registry (collector_registry.cc): every collector, in the order they
// run each cycle, with its flags and the section of /metrics that exports
// its part of the snapshot. Adding a collector is its folder (collector,
// parser, flags, section) plus one entry there; no static self-registration.

// The collectors' flags, in registry order (their --help order), writing
// into `config`'s options of each collector; `config` must outlive them.
std::vector<CollectorFlagsPtr> MakeCollectorFlags(AgentConfig& config);

// The collectors the flags turn on, in registry order.
std::vector<CollectorPtr> MakeCollectors(const AgentConfig& config,
                                         const ProfilerHandles& profilers = {});

// The collectors' sections in registry order, then every collector's
// health (trainscope_collector_*).
std::vector<FamilySection> CollectorSections();

}  // namespace trainscope
