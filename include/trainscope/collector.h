#pragma once

#include <memory>
#include <string_view>

#include "trainscope/host_paths.h"
#include "trainscope/pod.h"
#include "trainscope/snapshot.h"
#include "trainscope/status.h"

namespace trainscope {

// What a collector may read during one cycle.
struct CollectContext {
  const HostPaths& host;
  std::shared_ptr<const PodList> pods;
  // Pods on other nodes, known only to name flow peers (the peer-pod watch
  // of apiserver discovery); never a source of pod-level series. May be
  // null.
  std::shared_ptr<const PodList> peer_pods = nullptr;
};

// One unit of collection: a folder of collectors/, listed once in the
// agent's collector registry (agent/collector_registry.cc). Collectors run
// in the registry's order each cycle and fill their part of the snapshot; a
// later collector may read what an earlier one wrote (procnet reads the PIDs
// the cgroup collector found). Collect must not throw: failures are returned.
class Collector {
 public:
  virtual ~Collector() = default;
  virtual std::string_view name() const = 0;
  virtual CollectStatus Collect(const CollectContext& ctx, Snapshot& out) = 0;
};

using CollectorPtr = std::unique_ptr<Collector>;

}  // namespace trainscope
