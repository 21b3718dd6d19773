#include "cleanup.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <thread>

#include "cgroups.h"
#include "cluster.h"
#include "hungfs.h"
#include "layout.h"
#include "netns.h"
#include "node.h"

namespace trainsim {
namespace fs = std::filesystem;

int SupervisorPid(const std::string& run_id) {
  std::ifstream in(RunDir(run_id) + "/supervisor.pid");
  int pid = -1;
  if (!(in >> pid) || pid <= 1 || pid == getpid()) return -1;
  // The pid may have been reused: it must still be a trainsim process.
  std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
  std::string name;
  comm >> name;
  return name == "trainsim" ? pid : -1;
}

std::vector<std::string> CleanupRun(const std::string& run_id,
                                    bool keep_run_dir) {
  std::vector<std::string> left;
  if (!ValidRunId(run_id)) return {"invalid run id \"" + run_id + "\""};
  if (int pid = SupervisorPid(run_id); pid > 0) {
    // A live `up` supervisor tears down itself; give it the chance.
    kill(pid, SIGTERM);
    for (int i = 0; i < 150 && kill(pid, 0) == 0; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    if (kill(pid, 0) == 0) kill(pid, SIGKILL);
  }
  // A blocked_io fault's hung mount first: its readers (state D) must be
  // free before their cgroups can empty, and the run dir holding it go.
  for (const std::string& l : ReleaseHungMounts(RunDir(run_id)))
    left.push_back(l);
  for (const std::string& l : RemoveRunCgroups(DetectHierarchies(), run_id))
    left.push_back("cgroup " + l);
  for (const std::string& l : RemoveRunNetwork(run_id)) left.push_back(l);
  std::error_code ec;
  fs::remove_all(InputDir(run_id), ec);
  if (!keep_run_dir) {
    fs::remove_all(RunDir(run_id), ec);
    rmdir("/run/trainsim");  // only when no other run is left
  }
  return left;
}

std::vector<std::string> LeftoverRunIds() {
  std::set<std::string> ids;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/run/trainsim", ec))
    if (ValidRunId(e.path().filename().string()))
      ids.insert(e.path().filename().string());
  for (const auto& e : fs::directory_iterator("/var/tmp", ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("trainsim-", 0) == 0 && ValidRunId(name.substr(9)))
      ids.insert(name.substr(9));
  }
  for (const std::string& id : RunIdsInNetwork()) ids.insert(id);
  const std::regex pod("^kubepods-burstable-pod([0-9a-f]{8})_" +
                       std::string(kUidMarker) + "_.*\\.slice$");
  const std::regex slice(kNodeSlicePattern);
  for (const Hierarchy& h : DetectHierarchies()) {
    for (const std::string& s : RunNodeSlices(h, "")) {
      std::smatch m;
      if (std::regex_match(s, m, slice)) ids.insert(m[1]);
    }
    for (const auto& e : fs::directory_iterator(
             h.root + "/kubepods.slice/kubepods-burstable.slice", ec)) {
      std::smatch m;
      const std::string name = e.path().filename().string();
      if (std::regex_match(name, m, pod)) ids.insert(m[1]);
    }
  }
  return {ids.begin(), ids.end()};
}

}  // namespace trainsim
