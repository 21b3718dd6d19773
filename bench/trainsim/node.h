#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "cgroups.h"
#include "exec.h"
#include "layout.h"
#include "pod_json.h"
#include "scenario.h"
#include "stats.h"

namespace trainscope::testing {
class FakeApiServer;
}

namespace trainsim {

// Where a run keeps its files: /run/trainsim/<run> (scenario copy, stats,
// logs, pid and info files) and /var/tmp/trainsim-<run> (input_read data,
// which must sit on a real disk).
std::string RunDir(const std::string& run_id);
std::string InputDir(const std::string& run_id);
// The last `lines` lines of a log file, indented, for error messages.
std::string LogTail(const std::string& path, size_t lines);

// One simulated node: the pods of a scenario as netns + cgroups + traffic
// processes, and the API server that lists them. The destructor tears
// everything down (by run id, the same code `trainsim cleanup` runs).
class SimNode {
 public:
  SimNode(Scenario scenario, const std::string& scenario_path,
          std::string run_id);
  ~SimNode();
  SimNode(const SimNode&) = delete;
  SimNode& operator=(const SimNode&) = delete;

  // The trainsim binary that runs the pod processes (default: this
  // executable; tests that embed SimNode point it at the real binary).
  void set_exe(std::string exe) { exe_ = std::move(exe); }
  // Network, cgroups, API server, pod processes. Throws with context.
  void Up();
  // Up() in two halves: everything but the traffic (network, cgroups, the
  // API listing the pods), then the pod processes. Between the two an agent
  // can get ready, so it counts the traffic from its first byte.
  void Prepare();
  void StartPods();
  // SIGTERM to the pods, which finish their exchange and write final stats.
  void StopPods();
  void Teardown();

  const Scenario& scenario() const { return scenario_; }
  const Layout& layout() const { return layout_; }
  const std::string& run_id() const { return layout_.run_id; }
  std::string run_dir() const { return RunDir(layout_.run_id); }
  std::string api_url() const;
  double start_epoch_s() const { return start_epoch_s_; }
  GroundTruth Truth(std::map<std::string, uint64_t>* steps = nullptr) const;
  // The traffic process of a pod (-1 when not running).
  pid_t PodPid(const std::string& pod) const;

  // Fault hooks.
  Cgroups& cgroups() { return *cgroups_; }
  void UpdatePod(const SimPod& pod);  // re-publishes it: a MODIFIED event
  PodOverrides& overrides(const std::string& pod) { return overrides_[pod]; }
  // Starts `trainsim <args>` inside the pod's netns and cgroups.
  void SpawnInPod(const SimPod& pod, std::vector<std::string> args,
                  const std::string& log_name);

 private:
  Scenario scenario_;
  Layout layout_;
  std::string scenario_copy_;
  std::string exe_;
  double start_epoch_s_ = 0;
  std::string created_at_;
  std::unique_ptr<Cgroups> cgroups_;
  std::unique_ptr<trainscope::testing::FakeApiServer> api_;
  std::map<std::string, PodOverrides> overrides_;
  std::map<std::string, Subprocess> pods_;
  std::vector<Subprocess> helpers_;
  bool torn_down_ = false;
};

}  // namespace trainsim
