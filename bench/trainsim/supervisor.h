#pragma once

#include <string>
#include <vector>

namespace trainsim {

struct RunOptions {
  std::string scenario_path;
  std::string run_id;     // "" = a new random one
  std::string agent_bin;  // "" = no agent
  std::vector<std::string> agent_args;
  int agent_port = 0;       // 0 = a free port (a cluster: first of N)
  std::string cli_bin;      // trainscope CLI for the cluster view ("" = find)
  int prometheus_port = 0;  // cluster runs; 0 = a free port
  double duration_s = 0;    // > 0 overrides the scenario's duration_s
  bool verify = false;
  // `up`: run until SIGTERM instead of duration_s; write info.json when ready.
  bool until_stopped = false;
  // Start the agent before the traffic, and the pod processes only once the
  // agent is ready (/readyz, every pod in /api/v1/pods) and has sampled two
  // more intervals: the agent then counts the traffic from its first byte.
  // duration_s counts from the traffic's start. Needs an agent.
  bool traffic_after_agent_ready = false;
  // After the traffic stopped (every pod process drained and exited):
  // write the per-pod, per-peer ground truth and its time window as JSON
  // to this file (atomically: FILE.tmp, then renamed).
  std::string ground_truth_json;
  // Keep the node (API, netns, cgroups) and the agent up this many seconds
  // after the traffic stopped, before the teardown, so the agent's final
  // counters can be read. SIGINT/SIGTERM ends the wait early.
  double linger_s = 0;
  // verify: write the run's results (true and estimated steps/s, the
  // diagnoses with their cost figures, the verdict) to this JSON file.
  std::string results_json;
  // The nodes and pods go to this kubeconfig's API server instead of a fake
  // one (docs/trainsim.md, "A real API server"); the agents get a token of
  // agent_service_account ("namespace/name"; "" = the kubeconfig's token).
  std::string kubeconfig;
  std::string agent_service_account = "trainscope/trainscope-agent";
};

// run / verify / the body of up. Returns the process exit code; teardown
// happens on every path (normal end, error, SIGINT/SIGTERM).
int RunScenario(const RunOptions& options);

// Where `verify` looks for the agent when --agent is not given.
std::string DefaultAgentPath();
// The fake NVML library (docs/gpu.md) in this build tree, "" when absent.
std::string FakeNvmlLibrary();

}  // namespace trainsim
