#include "collector_registry.h"

#include "cgroup/cgroup_collector.h"
#include "node/node_collector.h"
#include "procnet/procnet_collector.h"

namespace trainscope {

std::vector<CollectorPtr> MakeCollectors(const AgentConfig& config) {
  std::vector<CollectorPtr> collectors;
  // cgroup first: it finds each pod's cgroups and PIDs that procnet uses.
  collectors.push_back(std::make_unique<CgroupCollector>(config.host));
  collectors.push_back(std::make_unique<ProcNetCollector>(config.host));
  collectors.push_back(std::make_unique<NodeCollector>(config.host));
  return collectors;
}

}  // namespace trainscope
