#include "node.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cleanup.h"
#include "cluster.h"
#include "crash_signal.h"
#include "fabric.h"
#include "fault_gate.h"
#include "hang_faults.h"
#include "netns.h"

namespace trainsim {
namespace fs = std::filesystem;

std::string LogTail(const std::string& path, size_t lines) {
  std::ifstream in(path);
  std::vector<std::string> tail;
  for (std::string line; std::getline(in, line);) {
    tail.push_back(line);
    if (tail.size() > lines) tail.erase(tail.begin());
  }
  std::string out;
  for (const std::string& l : tail) out += "  | " + l + "\n";
  return out.empty() ? "  | (empty)\n" : out;
}

std::string RunDir(const std::string& run_id) {
  return "/run/trainsim/" + run_id;
}
std::string InputDir(const std::string& run_id) {
  return "/var/tmp/trainsim-" + run_id;
}

namespace {

std::string Rfc3339Now() {
  std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string NodeNames(const Layout& layout) {
  std::string out;
  for (const SimNodeInfo& n : layout.nodes)
    out += (out.empty() ? "" : ", ") + n.name;
  return out;
}

double EpochNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

}  // namespace

SimNode::SimNode(Scenario scenario, const std::string& scenario_path,
                 std::string run_id)
    : scenario_(std::move(scenario)) {
  layout_ = MakeLayout(scenario_, run_id);
  const std::string dir = RunDir(run_id);
  // `up` creates the dir first (for its log); a scenario copy means the run
  // id is taken.
  if (fs::exists(dir + "/scenario.json"))
    throw std::runtime_error("run " + run_id + " exists already (" + dir + ")");
  fs::create_directories(dir + "/stats");
  fs::create_directories(dir + "/logs");
  fs::create_directories(InputDir(run_id));
  // Pod processes read this copy, so editing the file mid-run changes
  // nothing.
  scenario_copy_ = dir + "/scenario.json";
  fs::copy_file(scenario_path, scenario_copy_);
}

SimNode::~SimNode() {
  try {
    Teardown();
  } catch (const std::exception& e) {
    spdlog::error("[trainsim] teardown of run {}: {}", layout_.run_id,
                  e.what());
  }
}

AgentApiAccess SimNode::api_access() const {
  return api_ ? api_->agent_access() : AgentApiAccess{};
}

void SimNode::Up() {
  Prepare();
  StartPods();
}

void SimNode::Prepare() {
  spdlog::info("[trainsim] run {}: {} pods on {} {}", layout_.run_id,
               layout_.pods.size(), layout_.cluster() ? "nodes" : "node",
               layout_.cluster() ? NodeNames(layout_) : layout_.node_name);
  StartApi();
  cgroups_ = std::make_unique<Cgroups>(DetectHierarchies());
  if (layout_.cluster())
    CreateClusterNetwork(layout_);
  else
    CreateBridge(layout_);
  // The API objects first, as the kubelet only makes a pod's cgroups once
  // the pod exists: they are named after its uid.
  api_->CreateNodes(layout_);
  created_at_ = Rfc3339Now();
  for (SimPod& pod : layout_.pods) {
    try {
      pod.uid = api_->CreatePod(
          PodJson(layout_, pod, overrides_[pod.name], "0", created_at_));
      CreatePodNetwork(layout_, pod);
      cgroups_->CreatePod(pod);
    } catch (const std::exception& e) {
      throw std::runtime_error("setting up pod " + pod.name + ": " + e.what());
    }
  }
}

void SimNode::StartApi() {
  if (!kube_api_) {
    api_ = StartFakeClusterApi();
    return;
  }
  kube_api_->files_dir = run_dir();
  api_ = ConnectKubeClusterApi(*kube_api_);
  // The server's uids do not carry the run id that cleanup recognises pod
  // cgroups by: on a single node the pods then live under a slice of the
  // run's own, as a cluster's do, and cleanup removes that slice whole.
  if (!layout_.cluster()) {
    layout_.nodes[0].cgroup_parent = NodeSliceName(layout_.run_id, 0);
    for (SimPod& pod : layout_.pods)
      pod.cgroup_parent = layout_.nodes[0].cgroup_parent + "/";
  }
}

void SimNode::StartPods() {
  if (!api_) throw std::runtime_error("StartPods before Prepare");
  start_epoch_s_ = EpochNow();
  if (exe_.empty()) exe_ = SelfExe();
  for (const SimPod& pod : layout_.pods) SpawnPod(pod);
}

void SimNode::SpawnPod(const SimPod& pod) {
  char start[32];
  std::snprintf(start, sizeof start, "%.3f", start_epoch_s_);
  std::vector<std::string> args = {
      exe_,
      "__pod",
      "--scenario",
      scenario_copy_,
      "--run-id",
      layout_.run_id,
      "--pod",
      pod.name,
      "--stats",
      run_dir() + "/stats/" + pod.name + ".json",
      "--input-dir",
      InputDir(layout_.run_id),
      "--start-epoch",
      start,
      "--netns",
      fs::path(std::string("/run/netns/") + pod.netns).string()};
  for (const std::string& dir : cgroups_->ContainerDirs(pod)) {
    args.push_back("--cgroup");
    args.push_back(dir);
  }
  // A restarted pod appends to its log, as `kubectl logs` keeps the
  // previous container's.
  pods_[pod.name] =
      Subprocess::Spawn(args, run_dir() + "/logs/" + pod.name + ".log");
  pod_started_at_[pod.name] = Rfc3339Now();
}

bool SimNode::CrashPod(const SimPod& pod, int exit_code) {
  if (restarts_.count(pod.name)) return false;  // down already
  auto it = pods_.find(pod.name);
  if (it == pods_.end() || it->second.pid() <= 0)
    throw std::runtime_error("no running process to crash");
  if (!SendCrash(it->second.pid(), exit_code))
    throw std::runtime_error("sigqueue: " + std::string(std::strerror(errno)));
  restarts_[pod.name] =
      PendingRestart{.oom_kills_before = cgroups_->OomKills(pod)};
  return true;
}

bool SimNode::OomPod(const SimPod& pod, long order_id) {
  if (restarts_.count(pod.name)) return false;  // down already
  if (PodPid(pod.name) <= 0)
    throw std::runtime_error("no running process to run out of memory");
  const uint64_t limit = pod.resources.memory_limit_bytes.value_or(0);
  if (limit == 0) throw std::runtime_error("the pod has no memory limit");
  // Twice the limit: far past it, yet bounded should no limit be enforced.
  const uint64_t cap = 2 * limit + (64ULL << 20);
  restarts_[pod.name] = PendingRestart{
      .oom_kills_before = cgroups_->OomKills(pod), .oom_order = true};
  const std::string file = FaultFilePath(run_id(), pod.name);
  fs::create_directories(fs::path(file).parent_path());
  WriteFaultFile(file, {order_id, "oom", std::to_string(cap), ""});
  return true;
}

void SimNode::RecordEnd(const SimPod* pod, const PendingRestart& pending,
                        int status, ContainerRestarts& r) {
  r.last_exit_code = WIFEXITED(status)     ? WEXITSTATUS(status)
                     : WIFSIGNALED(status) ? 128 + WTERMSIG(status)
                                           : 1;
  r.last_reason = r.last_exit_code == 0 ? "Completed" : "Error";
  // SIGKILL (a program pod exits with 128 + its program's signal, as a
  // container does) while the cgroup's OOM kill count rose: the kernel's
  // OOM killer, which the kubelet reports as OOMKilled, 137.
  const bool sigkill = r.last_exit_code == 128 + SIGKILL;
  if (pod && sigkill && cgroups_->OomKills(*pod) > pending.oom_kills_before)
    r.last_reason = "OOMKilled";
}

void SimNode::TickRestarts() {
  const double now = EpochNow();
  for (auto it = restarts_.begin(); it != restarts_.end();) {
    const std::string name = it->first;
    PendingRestart& pending = it->second;
    const SimPod* pod = layout_.Find(name);
    ContainerRestarts& r = overrides_[name].restarts;
    if (!pending.reaped) {
      Subprocess& process = pods_[name];
      if (process.Running()) {
        ++it;
        continue;
      }
      // The restarted process must not find the order again.
      if (pending.oom_order) RemoveFaultFile(FaultFilePath(run_id(), name));
      RecordEnd(pod, pending, process.status(), r);
      r.last_started_at = pod_started_at_[name];
      r.last_finished_at = Rfc3339Now();
      ++r.count;
      // The kubelet's back-off: none before the first restart, then 10 s
      // doubling up to 5 min.
      const double backoff =
          r.count == 1
              ? 0
              : std::min(300.0, 10.0 * (1 << std::min(r.count - 2, 5)));
      pending = {true, now + backoff};
      r.backing_off = backoff > 0;
      spdlog::info("[trainsim] {} exited with {} ({}); restart {} in {:.0f} s",
                   name, r.last_exit_code, r.last_reason, r.count, backoff);
      if (pod) UpdatePod(*pod);
    }
    if (now < pending.due_epoch_s) {
      ++it;
      continue;
    }
    if (pod) {
      SpawnPod(*pod);
      r.backing_off = false;
      r.running_since = pod_started_at_[name];
      UpdatePod(*pod);
    }
    it = restarts_.erase(it);
  }
}

void SimNode::SpawnInPod(const SimPod& pod, std::vector<std::string> args,
                         const std::string& log_name) {
  args.insert(args.begin(), exe_.empty() ? SelfExe() : exe_);
  args.push_back("--netns");
  args.push_back("/run/netns/" + pod.netns);
  for (const std::string& dir : cgroups_->ContainerDirs(pod)) {
    args.push_back("--cgroup");
    args.push_back(dir);
  }
  helpers_.push_back(
      Subprocess::Spawn(args, run_dir() + "/logs/" + log_name + ".log"));
}

void SimNode::UpdatePod(const SimPod& pod) {
  if (api_)
    api_->UpdatePod(
        PodJson(layout_, pod, overrides_[pod.name], "0", created_at_));
}

pid_t SimNode::PodPid(const std::string& pod) const {
  auto it = pods_.find(pod);
  return it == pods_.end() ? -1 : it->second.pid();
}

void SimNode::StopPods() {
  for (Subprocess& h : helpers_) h.Stop(std::chrono::seconds(2));
  helpers_.clear();
  // Nothing may stay stopped (a sigstop fault): SIGCONT to every process
  // of the pods first, else a stopped one would not take its SIGTERM.
  if (cgroups_)
    for (const SimPod& pod : layout_.pods)
      SignalAll(PodProcesses(cgroups_->ContainerDirs(pod)), SIGCONT);
  // Signal all first so every end drains at the same time, then reap.
  for (auto& [name, p] : pods_)
    if (p.pid() > 0) kill(p.pid(), SIGTERM);
  for (auto& [name, p] : pods_) {
    int status = p.Stop(std::chrono::seconds(8));
    // The run dir goes with the teardown, so show the log now.
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
      spdlog::warn(
          "[trainsim] pod process {} ended with status {}; its log:\n{}", name,
          status, LogTail(run_dir() + "/logs/" + name + ".log", 20));
  }
  pods_.clear();
}

GroundTruth SimNode::Truth(std::map<std::string, uint64_t>* steps) const {
  return ReadGroundTruth(run_dir() + "/stats", steps);
}

void SimNode::Teardown() {
  if (torn_down_) return;
  torn_down_ = true;
  StopPods();
  if (api_) api_->DeleteAll();
  api_.reset();
  std::vector<std::string> left =
      CleanupRun(layout_.run_id, /*keep_run_dir=*/false);
  for (const std::string& l : left)
    spdlog::error("[trainsim] run {}: could not remove {}", layout_.run_id, l);
}

}  // namespace trainsim
