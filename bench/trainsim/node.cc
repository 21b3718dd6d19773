#include "node.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>

#include <ctime>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "cleanup.h"
#include "fabric.h"
#include "fake_apiserver.h"
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

std::string SimNode::api_url() const { return api_ ? api_->url() : ""; }

void SimNode::Up() {
  Prepare();
  StartPods();
}

void SimNode::Prepare() {
  spdlog::info("[trainsim] run {}: {} pods on {} {}", layout_.run_id,
               layout_.pods.size(), layout_.cluster() ? "nodes" : "node",
               layout_.cluster() ? NodeNames(layout_) : layout_.node_name);
  cgroups_ = std::make_unique<Cgroups>(DetectHierarchies());
  if (layout_.cluster())
    CreateClusterNetwork(layout_);
  else
    CreateBridge(layout_);
  for (const SimPod& pod : layout_.pods) {
    try {
      CreatePodNetwork(layout_, pod);
      cgroups_->CreatePod(pod);
    } catch (const std::exception& e) {
      throw std::runtime_error("setting up pod " + pod.name + ": " + e.what());
    }
  }

  trainscope::testing::FakeApiServerOptions options;
  // An idle watch re-checks at this pace; slower means less CPU.
  options.watch_poll = std::chrono::milliseconds(250);
  api_ = std::make_unique<trainscope::testing::FakeApiServer>(options);
  std::string error;
  if (!api_->Start(&error)) throw std::runtime_error("API server: " + error);
  created_at_ = Rfc3339Now();
  for (const SimPod& pod : layout_.pods)
    api_->AddPod(PodJson(layout_, pod, overrides_[pod.name], "0", created_at_));
}

void SimNode::StartPods() {
  if (!api_) throw std::runtime_error("StartPods before Prepare");
  start_epoch_s_ = EpochNow();
  if (exe_.empty()) exe_ = SelfExe();
  const std::string& self = exe_;
  char start[32];
  std::snprintf(start, sizeof start, "%.3f", start_epoch_s_);
  for (const SimPod& pod : layout_.pods) {
    std::vector<std::string> args = {
        self,
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
    pods_[pod.name] =
        Subprocess::Spawn(args, run_dir() + "/logs/" + pod.name + ".log");
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
    api_->ModifyPod(
        PodJson(layout_, pod, overrides_[pod.name], "0", created_at_));
}

pid_t SimNode::PodPid(const std::string& pod) const {
  auto it = pods_.find(pod);
  return it == pods_.end() ? -1 : it->second.pid();
}

void SimNode::StopPods() {
  for (Subprocess& h : helpers_) h.Stop(std::chrono::seconds(2));
  helpers_.clear();
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
  if (api_) api_->Stop();
  api_.reset();
  std::vector<std::string> left =
      CleanupRun(layout_.run_id, /*keep_run_dir=*/false);
  for (const std::string& l : left)
    spdlog::error("[trainsim] run {}: could not remove {}", layout_.run_id, l);
}

}  // namespace trainsim
