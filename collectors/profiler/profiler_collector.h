#pragma once

#include <memory>

#include "profiler/profiler_service.h"
#include "trainscope/collector.h"

namespace trainscope::profiler {

// Reports whether the profiler can work on this node:
// trainscope_collector_up{collector="profiler"} is 1 when perf_event and BPF
// can be used, 0 with the reason otherwise (logged once by the sampler and
// returned by /api/v1/profile). Profiles themselves run on demand.
class ProfilerCollector : public Collector {
 public:
  explicit ProfilerCollector(std::shared_ptr<ProfilerService> service)
      : service_(std::move(service)) {}
  std::string_view name() const override { return "profiler"; }
  CollectStatus Collect(const CollectContext&, Snapshot&) override {
    return service_->Health();
  }

 private:
  std::shared_ptr<ProfilerService> service_;
};

}  // namespace trainscope::profiler
