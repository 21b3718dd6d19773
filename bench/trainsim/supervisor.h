#pragma once

#include <string>
#include <vector>

namespace trainsim {

struct RunOptions {
  std::string scenario_path;
  std::string run_id;     // "" = a new random one
  std::string agent_bin;  // "" = no agent
  std::vector<std::string> agent_args;
  int agent_port = 0;     // 0 = a free port
  double duration_s = 0;  // > 0 overrides the scenario's duration_s
  bool verify = false;
  // `up`: run until SIGTERM instead of duration_s; write info.json when ready.
  bool until_stopped = false;
};

// run / verify / the body of up. Returns the process exit code; teardown
// happens on every path (normal end, error, SIGINT/SIGTERM).
int RunScenario(const RunOptions& options);

// Where `verify` looks for the agent when --agent is not given.
std::string DefaultAgentPath();
// The fake NVML library (docs/gpu.md) in this build tree, "" when absent.
std::string FakeNvmlLibrary();

}  // namespace trainsim
