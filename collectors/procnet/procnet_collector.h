#pragma once

#include <string_view>

#include "trainscope/collector.h"

namespace trainscope {

// Per-pod network counters from /proc/<pid>/net/dev of a process inside the
// pod's network namespace. Runs after the cgroup collector, whose PIDs it
// uses. hostNetwork pods share the node's namespace: they are marked and
// not counted, or every such pod would report the whole node's traffic.
class ProcNetCollector : public Collector {
 public:
  explicit ProcNetCollector(HostPaths host) : host_(std::move(host)) {}
  std::string_view name() const override { return "procnet"; }
  Status Collect(const CollectContext& ctx, Snapshot& out) override;

 private:
  HostPaths host_;
};

}  // namespace trainscope
