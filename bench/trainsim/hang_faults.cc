#include "hang_faults.h"

#include <signal.h>
#include <spdlog/spdlog.h>

#include <filesystem>
#include <fstream>
#include <set>

#include "cgroups.h"
#include "fault_gate.h"
#include "hungfs.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

// The tc filter priority of a blackhole: its own, so removing it leaves
// any other filter alone.
constexpr const char* kBlackholePref = "49";

}  // namespace

std::vector<pid_t> PodProcesses(const std::vector<std::string>& cgroup_dirs) {
  std::set<pid_t> pids;
  for (const std::string& dir : cgroup_dirs) {
    std::ifstream in(dir + "/cgroup.procs");
    for (pid_t pid; in >> pid;) pids.insert(pid);
  }
  return {pids.begin(), pids.end()};
}

int SignalAll(const std::vector<pid_t>& pids, int sig) {
  int reached = 0;
  for (pid_t pid : pids) reached += kill(pid, sig) == 0;
  return reached;
}

void Blackhole(const std::string& netns, const std::string& peer_ip) {
  // No tc action modules here (no "action drop"): the peer's packets are
  // classified by u32 into an htb class whose only queue holds nothing
  // (pfifo limit 0), so each one is dropped at enqueue; the rest pass
  // through a class no link can fill.
  const std::vector<std::string> tc = {"tc", "-n", netns};
  auto run = [&tc](std::vector<std::string> args) {
    args.insert(args.begin(), tc.begin(), tc.end());
    MustRun(args);
  };
  run({"qdisc", "add", "dev", "eth0", "root", "handle", "1:", "htb", "default",
       "1"});
  run({"class", "add", "dev", "eth0", "parent", "1:", "classid", "1:1", "htb",
       "rate", "100gbit"});
  run({"class", "add", "dev", "eth0", "parent", "1:", "classid", "1:2", "htb",
       "rate", "100gbit"});
  run({"qdisc", "add", "dev", "eth0", "parent", "1:2", "handle", "20:", "pfifo",
       "limit", "0"});
  run({"filter", "add", "dev", "eth0", "parent", "1:", "pref", kBlackholePref,
       "protocol", "ip", "u32", "match", "ip", "dst", peer_ip + "/32", "flowid",
       "1:2"});
}

void Unblackhole(const std::string& netns) {
  RunCommand({"tc", "-n", netns, "qdisc", "del", "dev", "eth0", "root"});
}

// A checkpoint's `mbit`: the pod's disk writes throttled in its cgroups, as
// a slow volume would bound them (the rank writes with O_DIRECT).
void HangFaults::ThrottleCheckpoint(const SimPod& pod, const Fault& f) {
  if (f.mbit <= 0) return;
  const std::string dev = BlockDeviceOf(InputDir(node_.run_id()));
  if (dev.empty()) {
    spdlog::warn(
        "[trainsim] {} is not on a block device: checkpoint unthrottled",
        InputDir(node_.run_id()));
    return;
  }
  node_.cgroups().SetWriteBps(pod, dev,
                              static_cast<uint64_t>(f.mbit * 1e6 / 8));
}

std::string HangFaults::MountPoint(const std::string& pod) const {
  return node_.run_dir() + "/hungfs/" + pod;
}

void HangFaults::Start(size_t index, const Fault& f) {
  const SimPod* pod = node_.layout().Find(f.pod);
  if (!pod) throw std::runtime_error("no such pod");
  Active& a = active_[index];
  a.fault = &f;
  const std::string file = FaultFilePath(node_.run_id(), f.pod);
  fs::create_directories(fs::path(file).parent_path());
  const long id = static_cast<long>(index) + 1;
  if (f.kind == FaultKind::kCheckpoint) {
    ThrottleCheckpoint(*pod, f);
    WriteFaultFile(file,
                   {id, "checkpoint", std::to_string(f.bytes),
                    InputDir(node_.run_id()) + "/" + f.pod + ".checkpoint"});
    return;
  }
  switch (f.hang_mode) {
    case HangMode::kSigstop: {
      const int n =
          SignalAll(PodProcesses(node_.cgroups().ContainerDirs(*pod)), SIGSTOP);
      spdlog::info("[trainsim] {}: {} processes stopped (SIGSTOP)", f.pod, n);
      break;
    }
    case HangMode::kLinkBlackhole: {
      const SimPod* peer = node_.layout().Find(f.peer);
      if (!peer) throw std::runtime_error("no such peer " + f.peer);
      Blackhole(pod->netns, peer->ip);
      Blackhole(peer->netns, pod->ip);
      spdlog::info("[trainsim] link {} <-> {} dropped both ways", f.pod,
                   f.peer);
      break;
    }
    case HangMode::kBlockedIo: {
      const std::string mnt = MountPoint(f.pod);
      a.hungfs =
          Subprocess::Spawn({SelfExe(), "__hungfs", mnt},
                            node_.run_dir() + "/logs/" + f.pod + "-hungfs.log");
      WriteFaultFile(file, {id, "blocked_io", mnt + "/" + kHungFileName, ""});
      break;
    }
    case HangMode::kBusyLoop:
      WriteFaultFile(file, {id, "busy_loop", "", ""});
      break;
    case HangMode::kAllWait:
      WriteFaultFile(file, {id, "all_wait", "", ""});
      break;
  }
}

void HangFaults::End(size_t index) {
  auto it = active_.find(index);
  if (it == active_.end()) return;
  spdlog::info("[trainsim] fault {} on {} ends",
               FaultKindName(it->second.fault->kind), it->second.fault->pod);
  EndActive(it->second);
  active_.erase(it);
}

void HangFaults::EndActive(Active& a) {
  const Fault& f = *a.fault;
  const SimPod* pod = node_.layout().Find(f.pod);
  if (!pod) return;
  // The order goes first, so a rank freed from its read does not block
  // again.
  RemoveFaultFile(FaultFilePath(node_.run_id(), f.pod));
  if (f.kind != FaultKind::kHang) return;
  switch (f.hang_mode) {
    case HangMode::kSigstop:
      SignalAll(PodProcesses(node_.cgroups().ContainerDirs(*pod)), SIGCONT);
      break;
    case HangMode::kLinkBlackhole:
      Unblackhole(pod->netns);
      if (const SimPod* peer = node_.layout().Find(f.peer))
        Unblackhole(peer->netns);
      break;
    case HangMode::kBlockedIo:
      // The server aborts its connection (the read fails) and unmounts;
      // whatever it could not, this does.
      a.hungfs.Stop(std::chrono::seconds(3));
      for (const std::string& l : ReleaseHungMounts(MountPoint(f.pod)))
        spdlog::error("[trainsim] {}", l);
      break;
    case HangMode::kBusyLoop:
    case HangMode::kAllWait:
      break;
  }
}

HangFaults::~HangFaults() {
  for (auto& [index, a] : active_) {
    try {
      EndActive(a);
    } catch (const std::exception& e) {
      spdlog::error("[trainsim] ending fault on {}: {}", a.fault->pod,
                    e.what());
    }
  }
}

}  // namespace trainsim
