#pragma once

#include <string_view>

#include "trainscope/collector.h"

namespace trainscope {

// Node totals: CPU time, memory, and the physical NICs with their link
// speed (the capacity the network diagnosis compares against).
class NodeCollector : public Collector {
 public:
  explicit NodeCollector(HostPaths host);
  std::string_view name() const override { return "node"; }
  Status Collect(const CollectContext& ctx, Snapshot& out) override;

 private:
  HostPaths host_;
  double ticks_per_second_;
};

}  // namespace trainscope
