#include "collector_registry.h"

#include "cgroup/cgroup_collector.h"
#include "flows/flows_collector.h"
#include "gpu/gpu_collector.h"
#include "node/node_collector.h"
#include "procnet/procnet_collector.h"
#include "profiler/profiler_collector.h"

namespace trainscope {
namespace {

FlowsOptions FlowsOptionsFrom(const AgentConfig& config) {
  FlowsOptions o;
  o.mode = config.flows_mode;
  for (size_t start = 0; start < config.pcap_interfaces.size();) {
    size_t end = config.pcap_interfaces.find(',', start);
    if (end == std::string::npos) end = config.pcap_interfaces.size();
    if (end > start) {
      o.pcap_interfaces.push_back(
          config.pcap_interfaces.substr(start, end - start));
    }
    start = end + 1;
  }
  o.training_ports = config.training_port_list;
  o.map_entries = config.flow_map_entries;
  o.burst_gap_s = config.step_burst_gap_seconds;
  o.pcap_buffer_bytes = config.pcap_buffer_bytes;
  o.cgroup2_path = config.cgroup2_path;
  o.node_name = config.node_name;
  return o;
}

NodeOptions NodeOptionsFrom(const AgentConfig& config) {
  NodeOptions o;
  o.interfaces = config.node_interface_list;
  if (config.node_link_mbit > 0) {
    o.link_speed_bytes_per_second = config.node_link_mbit * 1e6 / 8;
  }
  return o;
}

}  // namespace

std::vector<CollectorPtr> MakeCollectors(
    const AgentConfig& config,
    std::shared_ptr<profiler::ProfilerService> profiler,
    std::shared_ptr<profiler::ContinuousProfiler> continuous) {
  std::vector<CollectorPtr> collectors;
  // cgroup first: it finds each pod's cgroups and PIDs that procnet uses.
  collectors.push_back(std::make_unique<CgroupCollector>(config.host));
  collectors.push_back(std::make_unique<ProcNetCollector>(config.host));
  // flows after cgroup: it treats pods with a cgroup sample as local.
  if (config.flows_mode != "off") {
    collectors.push_back(std::make_unique<FlowsCollector>(
        FlowsOptionsFrom(config), config.host));
  }
  collectors.push_back(
      std::make_unique<NodeCollector>(config.host, NodeOptionsFrom(config)));
  collectors.push_back(
      std::make_unique<GpuCollector>(config.host, config.nvml_library));
  if (profiler) {
    collectors.push_back(std::make_unique<profiler::ProfilerCollector>(
        std::move(profiler), std::move(continuous)));
  }
  return collectors;
}

}  // namespace trainscope
