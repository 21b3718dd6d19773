#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "config.h"
#include "trainscope/collector_flags.h"

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
  // Each collector's flags (declared in its folder), in registry order.
  std::vector<CollectorFlagsPtr> collectors;
};

// The agent's own flags, by component, in --help order; every flag also
// reads TRAINSCOPE_<NAME>. Values land in `cfg` where they need no parsing,
// else in `text`.
void AddServerFlags(CLI::App& app, AgentConfig& cfg);
void AddDiscoveryFlags(CLI::App& app, AgentConfig& cfg, FlagText& text);
void AddHostFlags(CLI::App& app, AgentConfig& cfg, FlagText& text);
void AddLogFlags(CLI::App& app, AgentConfig& cfg);
// The agent's whole flag table in --help order: the above, with the
// collectors' flags (collector_registry.h) before the log flags.
void AddAgentFlags(CLI::App& app, AgentConfig& cfg, FlagText& text);

}  // namespace trainscope
