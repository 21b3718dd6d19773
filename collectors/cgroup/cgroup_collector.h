#pragma once

#include <filesystem>
#include <string_view>

#include "trainscope/collector.h"
#include "trainscope/host_paths.h"

namespace trainscope {

// Per pod and per container CPU, memory, IO and PSI from the pods' cgroups,
// on cgroup v2, v1 and hybrid hosts. Fills Snapshot::pod_samples for every
// pod of the context whose cgroup exists, including a few PIDs per pod that
// later collectors (procnet, GPU) use.
class CgroupCollector : public Collector {
 public:
  explicit CgroupCollector(const HostPaths& host);

  std::string_view name() const override { return "cgroup"; }
  CollectStatus Collect(const CollectContext& ctx, Snapshot& out) override;

 private:
  CollectStatus CollectOrThrow(const CollectContext& ctx, Snapshot& out);

  std::filesystem::path cgroup_root_;
};

}  // namespace trainscope
