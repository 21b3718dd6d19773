#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "config.h"

namespace trainscope {

// What the flags give as text to be parsed and checked after CLI11 has read
// them (lists, modes, paths), each with the flag's default: the component's
// own default where it has one.
struct FlagText {
  std::string host_proc = HostPaths{}.proc;
  std::string host_sys = HostPaths{}.sys;
  std::string cgroup_root = HostPaths{}.cgroup_root;
  std::string discovery =
      std::string(NameOfEnum(kDiscoveryModeNames, DiscoveryConfig{}.mode));
  std::string role_labels;  // "job_key,role_key,index_key;..."; "" = default
  std::string peer_pods_namespaces;
  std::string pod_filter = "training";
  std::string pod_namespaces;
  std::string flows =
      std::string(NameOfEnum(kFlowsModeNames, FlowsOptions{}.mode));
  std::string pcap_interfaces;  // comma list; "" = physical NICs
  std::string training_ports = "2222";
  std::string cgroup2_path;  // "" = found under --cgroup-root
  std::string node_interfaces;
  double node_link_mbit = 0;
  std::string profiler = "on";
  std::string profile_continuous = "on";
  std::string profile_continuous_offcpu = "off";
};

// The agent's flags, by component, in --help order; every flag also reads
// TRAINSCOPE_<NAME>. Values land in `cfg` where they need no parsing, else
// in `text` (and, for the profiler, in the options `cfg` starts with).
void AddServerFlags(CLI::App& app, AgentConfig& cfg);
void AddDiscoveryFlags(CLI::App& app, AgentConfig& cfg, FlagText& text);
void AddHostFlags(CLI::App& app, AgentConfig& cfg, FlagText& text);
void AddFlowsFlags(CLI::App& app, AgentConfig& cfg, FlagText& text);
void AddProfilerFlags(CLI::App& app, AgentConfig& cfg, FlagText& text);
void AddLogFlags(CLI::App& app, AgentConfig& cfg);
// Every one of the above, in --help order: the agent's whole flag table.
void AddAgentFlags(CLI::App& app, AgentConfig& cfg, FlagText& text);

}  // namespace trainscope
