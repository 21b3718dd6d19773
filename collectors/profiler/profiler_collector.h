#pragma once

#include <memory>

#include "profiler/continuous_profiler.h"
#include "profiler/profiler_service.h"
#include "trainscope/collector.h"

namespace trainscope::profiler {

// Reports whether the profiler can work on this node:
// trainscope_collector_up{collector="profiler"} is 1 when perf_event and BPF
// can be used, 0 with the reason otherwise (logged once by the sampler and
// returned by /api/v1/profile). On-demand profiles run in the service; the
// continuous profiler (null when off) is drained here once per cycle.
class ProfilerCollector : public Collector {
 public:
  ProfilerCollector(std::shared_ptr<ProfilerService> service,
                    std::shared_ptr<ContinuousProfiler> continuous)
      : service_(std::move(service)), continuous_(std::move(continuous)) {}
  std::string_view name() const override { return "profiler"; }
  CollectStatus Collect(const CollectContext& ctx, Snapshot&) override {
    Status health = service_->Health();
    if (!health.ok() || !continuous_ || !ctx.pods) return health;
    return continuous_->Update(*ctx.pods);
  }

 private:
  std::shared_ptr<ProfilerService> service_;
  std::shared_ptr<ContinuousProfiler> continuous_;
};

}  // namespace trainscope::profiler
