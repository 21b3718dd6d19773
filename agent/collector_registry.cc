#include "collector_registry.h"

#include "cgroup/cgroup_collector.h"
#include "cgroup/pod_families.h"
#include "exporter/collector_families.h"
#include "exporter/pod_status_families.h"
#include "flows/flows_collector.h"
#include "flows/flows_families.h"
#include "flows/flows_flags.h"
#include "gpu/gpu_collector.h"
#include "gpu/gpu_families.h"
#include "gpu/gpu_flags.h"
#include "node/node_collector.h"
#include "node/node_families.h"
#include "node/node_flags.h"
#include "procnet/procnet_collector.h"
#include "profiler/profiler_collector.h"
#include "profiler/profiler_flags.h"

namespace trainscope {
namespace {

// One collector: its flags (declared in its folder, writing its options in
// the config; null when it has none), how the flags make it (null when they
// turn it off) and its section of /metrics (empty when another collector's
// section carries it).
struct CollectorEntry {
  std::function<CollectorFlagsPtr(AgentConfig&)> flags;
  std::function<CollectorPtr(const AgentConfig&, const ProfilerHandles&)> make;
  FamilySection section;
};

const std::vector<CollectorEntry>& CollectorRegistry() {
  static const std::vector<CollectorEntry> registry = {
      // cgroup first: it finds each pod's cgroups and PIDs that procnet
      // uses; its section is every pod's series, procnet's included.
      {nullptr,
       [](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         return std::make_unique<CgroupCollector>(c.host);
       },
       AppendPodFamilies},
      {nullptr,
       [](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         return std::make_unique<ProcNetCollector>(c.host);
       },
       {}},
      // flows after cgroup: it treats pods with a cgroup sample as local.
      {[](AgentConfig& c) -> CollectorFlagsPtr {
         return std::make_unique<FlowsFlags>(
             &c.collectors.Mutable<FlowsOptions>(), &c.node_name);
       },
       [](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         const auto options = c.collectors.Get<FlowsOptions>();
         if (options.mode == FlowsMode::kOff) return nullptr;
         return std::make_unique<FlowsCollector>(options, c.host);
       },
       AppendFlowsFamilies},
      {[](AgentConfig& c) -> CollectorFlagsPtr {
         return std::make_unique<NodeFlags>(
             &c.collectors.Mutable<NodeOptions>());
       },
       [](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         return std::make_unique<NodeCollector>(
             c.host, c.collectors.Get<NodeOptions>());
       },
       AppendNodeFamilies},
      {[](AgentConfig& c) -> CollectorFlagsPtr {
         return std::make_unique<GpuFlags>(&c.collectors.Mutable<GpuOptions>());
       },
       [](const AgentConfig& c, const ProfilerHandles&) -> CollectorPtr {
         return std::make_unique<GpuCollector>(
             c.host, c.collectors.Get<GpuOptions>().nvml_library);
       },
       AppendGpuFamilies},
      // After flows: the profiler's BPF programs attach under its
      // --cgroup2-path.
      {[](AgentConfig& c) -> CollectorFlagsPtr {
         return std::make_unique<profiler::ProfilerFlags>(
             &c.on_demand_profiler, &c.continuous_profiler, &c.host,
             &c.collectors.Mutable<FlowsOptions>().cgroup2_path);
       },
       [](const AgentConfig&, const ProfilerHandles& p) -> CollectorPtr {
         if (!p.on_demand) return nullptr;
         return std::make_unique<profiler::ProfilerCollector>(p.on_demand,
                                                              p.continuous);
       },
       {}},
  };
  return registry;
}

}  // namespace

std::vector<CollectorFlagsPtr> MakeCollectorFlags(AgentConfig& config) {
  std::vector<CollectorFlagsPtr> flags;
  for (const CollectorEntry& entry : CollectorRegistry()) {
    if (entry.flags) flags.push_back(entry.flags(config));
  }
  return flags;
}

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
