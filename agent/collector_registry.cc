#include "collector_registry.h"

#include "cgroup/cgroup_collector.h"
#include "cgroup/pod_families.h"
#include "exporter/collector_families.h"
#include "exporter/pod_status_families.h"
#include "flows/flows_collector.h"
#include "flows/flows_families.h"
#include "gpu/gpu_collector.h"
#include "gpu/gpu_families.h"
#include "node/node_collector.h"
#include "node/node_families.h"
#include "procnet/procnet_collector.h"
#include "profiler/profiler_collector.h"

namespace trainscope {
namespace {

// One collector: how the flags make it (null when they turn it off) and its
// section of /metrics (empty when another collector's section carries it).
struct CollectorEntry {
  std::function<CollectorPtr(const AgentConfig&, const ProfilerHandles&)> make;
  FamilySection section;
};

const std::vector<CollectorEntry>& CollectorRegistry() {
  static const std::vector<CollectorEntry> registry = {
      // cgroup first: it finds each pod's cgroups and PIDs that procnet
      // uses; its section is every pod's series, procnet's included.
      {[](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         return std::make_unique<CgroupCollector>(c.host);
       },
       AppendPodFamilies},
      {[](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         return std::make_unique<ProcNetCollector>(c.host);
       },
       {}},
      // flows after cgroup: it treats pods with a cgroup sample as local.
      {[](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         if (c.flows.mode == FlowsMode::kOff) return nullptr;
         return std::make_unique<FlowsCollector>(c.flows, c.host);
       },
       AppendFlowsFamilies},
      {[](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         return std::make_unique<NodeCollector>(c.host, c.node);
       },
       AppendNodeFamilies},
      {[](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         return std::make_unique<GpuCollector>(c.host, c.nvml_library);
       },
       AppendGpuFamilies},
      {[](const AgentConfig&, const ProfilerHandles& p) -> CollectorPtr {
         if (!p.on_demand) return nullptr;
         return std::make_unique<profiler::ProfilerCollector>(p.on_demand,
                                                              p.continuous);
       },
       {}},
  };
  return registry;
}

}  // namespace

std::vector<CollectorPtr> MakeCollectors(const AgentConfig& config,
                                         const ProfilerHandles& profilers) {
  std::vector<CollectorPtr> collectors;
  for (const CollectorEntry& entry : CollectorRegistry()) {
    if (CollectorPtr c = entry.make(config, profilers))
      collectors.push_back(std::move(c));
  }
  return collectors;
}

std::vector<FamilySection> CollectorSections() {
  std::vector<FamilySection> sections;
  for (const CollectorEntry& entry : CollectorRegistry())
    if (entry.section) sections.push_back(entry.section);
  // Every pod's API status, whichever collectors run.
  sections.push_back(AppendPodStatusFamilies);
  sections.push_back(AppendCollectorFamilies);
  return sections;
}

}  // namespace trainscope
