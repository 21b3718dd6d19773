#pragma once

#include <string>
#include <vector>

namespace trainsim {

// What `trainsim __pod` (one simulated TF task) needs. Everything else
// (peers, placement, faults) it derives from the scenario and run id.
struct PodProcessArgs {
  std::string scenario_path;
  std::string run_id;
  std::string pod;
  std::string stats_path;
  std::string input_dir;     // for input_read faults (on a real disk)
  double start_epoch_s = 0;  // the job's start (faults count from it)
};

// Runs until SIGTERM/SIGINT; returns the exit code.
int RunPodProcess(const PodProcessArgs& args);

// Enters a named netns and the given cgroup dirs; a child calls this first,
// while it still has a single thread. Throws on failure.
void EnterPod(const std::string& netns_path,
              const std::vector<std::string>& cgroup_dirs);

// Blocks SIGINT/SIGTERM in the calling thread (and threads it creates) so
// WaitForStop can take them synchronously.
void BlockStopSignals();
// Waits up to `timeout_ms`; true when SIGINT/SIGTERM arrived.
bool WaitForStop(int timeout_ms);

}  // namespace trainsim
