#pragma once

#include <map>
#include <string>
#include <vector>

#include "exec.h"
#include "layout.h"
#include "scenario.h"

namespace trainsim {

// One trainscope-agent of a run: one per simulated node, each with its own
// --node-name, port and log, discovering its node's pods through the fake
// API (fieldSelector=spec.nodeName=<node>) as the DaemonSet does.
struct AgentProcess {
  std::string node;
  int port = 0;
  std::string log;  // <run dir>/agent.log (one node) or agent-<node>.log
  Subprocess process;
  bool died = false;
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port); }
};

struct AgentSettings {
  std::string binary;
  std::string api_url;
  std::string api_ca_file;     // --kube-ca-file ("" = none)
  std::string api_token_file;  // --kube-token-file ("" = none)
  std::string run_dir;
  double interval_s = 5;
  std::vector<std::string> extra_args;  // --agent-arg, after ours
  std::vector<std::string> env;
  int first_port = 0;  // 0: free ports; else consecutive from here
  // Pass --node-interfaces / --node-link-mbit to cluster agents.
  bool node_flags = false;
  // Cluster agents: --peer-pods-namespaces=<the scenario's namespaces>, so
  // each names the peers it talks to on other nodes.
  std::string peer_namespaces;
};

// The command line of node `k`'s agent. For a cluster: --cgroup2-path at
// the node's slice in the cgroup v2 hierarchy `cgroup2_root` (so its eBPF
// programs count only its pods), and with node_flags the node's uplink as
// its NIC. Pure.
std::vector<std::string> AgentArgs(const AgentSettings& s, const Layout& layout,
                                   int k, int port,
                                   const std::string& cgroup2_root);

// What the agent binary accepts, from its --help (asked once).
struct AgentCapabilities {
  // --node-interfaces/--node-link-mbit; TRAINSIM_AGENT_NODE_FLAGS=on|off
  // overrides what --help says.
  bool node_flags = false;
  bool peer_pods_namespaces = false;
};
AgentCapabilities AskAgent(const std::string& binary);

// A port on 127.0.0.1 nobody listens on right now.
int FreeLoopbackPort();

// Starts every node's agent. Throws when one cannot start.
std::vector<AgentProcess> StartAgents(const AgentSettings& s,
                                      const Layout& layout);

// Waits (bounded, 60 s) until every agent answers /readyz and lists all of
// its node's pods in /api/v1/pods, then two more sampling intervals. false
// when an agent died, was not ready in time, or a stop signal came.
bool WaitForAgentsReady(std::vector<AgentProcess>& agents, const Layout& layout,
                        double interval_s, bool* interrupted);

}  // namespace trainsim
