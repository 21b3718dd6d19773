#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cgroups.h"
#include "cluster_api.h"
#include "exec.h"
#include "kube_cluster_api.h"
#include "layout.h"
#include "pod_json.h"
#include "scenario.h"
#include "stats.h"

namespace trainsim {

// Where a run keeps its files: /run/trainsim/<run> (scenario copy, stats,
// logs, pid and info files) and /var/tmp/trainsim-<run> (input_read data,
// which must sit on a real disk).
std::string RunDir(const std::string& run_id);
std::string InputDir(const std::string& run_id);
// The last `lines` lines of a log file, indented, for error messages.
std::string LogTail(const std::string& path, size_t lines);

// One simulated node: the pods of a scenario as netns + cgroups + traffic
// processes, and the API server that lists them (a fake one of its own, or
// a real one: use_kube_api). The destructor tears
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
  // Before Prepare: put the nodes and pods in the real API server of a
  // kubeconfig instead of a fake one (files_dir is filled in: the run dir).
  void use_kube_api(KubeClusterApiOptions options) {
    kube_api_ = std::move(options);
  }
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
  std::string api_url() const { return api_access().url; }
  // How agents reach the API (URL, CA, token); empty before Prepare.
  AgentApiAccess api_access() const;
  double start_epoch_s() const { return start_epoch_s_; }
  GroundTruth Truth(std::map<std::string, uint64_t>* steps = nullptr) const;
  // The traffic process of a pod (-1 when not running).
  pid_t PodPid(const std::string& pod) const;

  // Fault hooks.
  Cgroups& cgroups() { return *cgroups_; }
  void UpdatePod(const SimPod& pod);  // re-publishes it: a MODIFIED event
  PodOverrides& overrides(const std::string& pod) { return overrides_[pod]; }
  // The crash fault: the pod's process exits with `exit_code` (its program
  // with it); TickRestarts then restarts it as the kubelet would.
  // False when the pod is down already (crashed, not yet restarted).
  bool CrashPod(const SimPod& pod, int exit_code);
  // The oom fault: orders the pod's training thread (its fault file,
  // `order_id`) to allocate past the pod's memory limit, so the kernel
  // kills it; TickRestarts reaps and restarts it as after a crash, with
  // reason OOMKilled when the pod's cgroup counted the kill. False when
  // the pod is down already.
  bool OomPod(const SimPod& pod, long order_id);
  // Reaps crashed pod processes, records their end in the pod's status
  // (restartCount, lastState.terminated) and restarts each after the
  // kubelet's back-off: at once the first time, then 10 s doubling up to
  // 300 s, waiting in CrashLoopBackOff meanwhile. The timeline calls it.
  void TickRestarts();
  // Starts `trainsim <args>` inside the pod's netns and cgroups.
  void SpawnInPod(const SimPod& pod, std::vector<std::string> args,
                  const std::string& log_name);

 private:
  // The fake API server, or the real one of use_kube_api.
  void StartApi();
  // The pod's traffic process (`trainsim __pod`), started now.
  void SpawnPod(const SimPod& pod);

  // A pod whose process was asked to crash: reaped, then restarted when
  // due (epoch seconds).
  struct PendingRestart {
    bool reaped = false;
    double due_epoch_s = 0;
    uint64_t oom_kills_before = 0;  // the pod cgroups' count when asked
    bool oom_order = false;         // its fault file holds an oom order
  };
  // lastState's reason and exit code for a process that ended with
  // `status`, as the kubelet reports them.
  void RecordEnd(const SimPod* pod, const PendingRestart& pending, int status,
                 ContainerRestarts& r);

  Scenario scenario_;
  Layout layout_;
  std::string scenario_copy_;
  std::string exe_;
  double start_epoch_s_ = 0;
  std::string created_at_;
  std::unique_ptr<Cgroups> cgroups_;
  std::optional<KubeClusterApiOptions> kube_api_;
  std::unique_ptr<ClusterApi> api_;
  std::map<std::string, PodOverrides> overrides_;
  std::map<std::string, Subprocess> pods_;
  std::map<std::string, PendingRestart> restarts_;
  std::map<std::string, std::string> pod_started_at_;  // RFC 3339
  std::vector<Subprocess> helpers_;
  bool torn_down_ = false;
};

}  // namespace trainsim
