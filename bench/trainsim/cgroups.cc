#include "cgroups.h"

#include <fcntl.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "cluster.h"

namespace trainsim {
namespace fs = std::filesystem;
namespace {

constexpr const char* kKubepods = "kubepods.slice";
constexpr const char* kBurstable = "kubepods.slice/kubepods-burstable.slice";
constexpr long kPeriodUs = 100000;

void WriteFile(const std::string& path, const std::string& value) {
  int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("open " + path + ": " + std::strerror(errno));
  ssize_t n = write(fd, value.data(), value.size());
  int err = errno;
  close(fd);
  if (n != static_cast<ssize_t>(value.size()))
    throw std::runtime_error("write \"" + value + "\" to " + path + ": " +
                             std::strerror(err));
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void MakeDir(const std::string& path) {
  // Another run (or another test) may remove an empty kubepods slice at the
  // same moment; retry a few times rather than fail.
  for (int attempt = 0; attempt < 5; ++attempt) {
    if (mkdir(path.c_str(), 0755) == 0 || errno == EEXIST) return;
    if (errno != ENOENT)
      throw std::runtime_error("mkdir " + path + ": " + std::strerror(errno));
    MakeDir(fs::path(path).parent_path().string());
  }
  throw std::runtime_error("mkdir " + path + ": parent keeps disappearing");
}

// A v1 cpuset child starts with no CPUs or memory nodes; copy the parent's.
void InitCpuset(const std::string& dir) {
  const std::string parent = fs::path(dir).parent_path().string();
  for (const char* file : {"cpuset.cpus", "cpuset.mems"}) {
    std::string value = ReadFile(dir + "/" + file);
    if (value.find_first_not_of(" \n") != std::string::npos) continue;
    std::string from = ReadFile(parent + "/" + file);
    if (from.find_first_not_of(" \n") == std::string::npos) continue;
    WriteFile(dir + "/" + file, from);
  }
}

bool Has(const Hierarchy& h, const std::string& controller) {
  return h.controllers.count(controller) > 0;
}

std::vector<pid_t> Procs(const std::string& dir) {
  std::vector<pid_t> pids;
  std::ifstream in(dir + "/cgroup.procs");
  pid_t pid;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

}  // namespace

std::vector<Hierarchy> DetectHierarchies(const std::string& cgroup_mount) {
  std::vector<Hierarchy> out;
  if (fs::exists(cgroup_mount + "/cgroup.controllers")) {
    Hierarchy h{cgroup_mount, true, {}};
    std::istringstream s(ReadFile(cgroup_mount + "/cgroup.controllers"));
    for (std::string c; s >> c;) h.controllers.insert(c);
    return {h};
  }
  std::ifstream mounts("/proc/self/mounts");
  std::string line;
  std::set<std::string> roots;
  while (std::getline(mounts, line)) {
    std::istringstream s(line);
    std::string dev, dir, type, opts;
    s >> dev >> dir >> type >> opts;
    if (type != "cgroup" && type != "cgroup2") continue;
    if (dir.rfind(cgroup_mount + "/", 0) != 0 || !roots.insert(dir).second)
      continue;
    Hierarchy h{dir, type == "cgroup2", {}};
    std::istringstream o(opts);
    for (std::string opt; std::getline(o, opt, ',');) h.controllers.insert(opt);
    out.push_back(h);
  }
  return out;
}

std::vector<std::string> RunNodeSlices(const Hierarchy& h,
                                       const std::string& run_id) {
  static const std::regex slice(kNodeSlicePattern);
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(h.root, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (std::regex_match(name, m, slice) && (run_id.empty() || m[1] == run_id))
      out.push_back(name);
  }
  return out;
}

std::string PodCgroupPath(const SimPod& pod) {
  return pod.cgroup_parent + kBurstable + "/kubepods-burstable-pod" +
         UnderscoredUid(pod.uid) + ".slice";
}

std::string ContainerCgroupPath(const SimPod& pod) {
  return PodCgroupPath(pod) + "/cri-containerd-" + pod.container_id + ".scope";
}

Cgroups::Cgroups(std::vector<Hierarchy> hierarchies)
    : hierarchies_(std::move(hierarchies)) {
  if (hierarchies_.empty())
    throw std::runtime_error(
        "no cgroup hierarchy mounted under /sys/fs/cgroup");
}

void Cgroups::CreatePod(const SimPod& pod) {
  for (const Hierarchy& h : hierarchies_) {
    // In a cluster every node has its own slice above kubepods.slice, so
    // each node's agent sees only its own pods.
    std::vector<std::string> levels = {
        pod.cgroup_parent + kKubepods, pod.cgroup_parent + kBurstable,
        PodCgroupPath(pod), ContainerCgroupPath(pod)};
    if (!pod.cgroup_parent.empty())
      levels.insert(levels.begin(),
                    fs::path(pod.cgroup_parent).parent_path().string());
    for (size_t i = 0; i < levels.size(); ++i) {
      const std::string dir = h.root + "/" + levels[i];
      MakeDir(dir);
      if (!h.v2 && Has(h, "cpuset")) InitCpuset(dir);
      // Pure v2: a controller reaches a cgroup only when every ancestor
      // delegates it. The leaf delegates nothing (it holds the processes).
      if (h.v2 && i + 1 < levels.size()) {
        const std::string parent = fs::path(dir).parent_path().string();
        for (const char* c : {"cpu", "memory", "io", "pids"}) {
          if (!Has(h, c)) continue;
          for (const std::string& d : {parent, dir}) {
            try {
              WriteFile(d + "/cgroup.subtree_control", std::string("+") + c);
            } catch (const std::exception& e) {
              spdlog::debug("[trainsim] {}", e.what());
            }
          }
        }
      }
    }
  }
  SetCpuLimit(pod, pod.resources.cpu_limit_cores);
  SetMemoryLimit(pod, pod.resources.memory_limit_bytes);
}

void Cgroups::SetCpuLimit(const SimPod& pod, std::optional<double> cores) {
  const long quota =
      cores ? std::max(1000L, std::lround(*cores * kPeriodUs)) : -1;
  for (const Hierarchy& h : hierarchies_) {
    if (!Has(h, "cpu")) continue;
    std::vector<std::string> dirs = {h.root + "/" + PodCgroupPath(pod),
                                     h.root + "/" + ContainerCgroupPath(pod)};
    auto apply = [&](const std::vector<std::string>& order) {
      for (const std::string& d : order) {
        if (h.v2) {
          WriteFile(d + "/cpu.max",
                    (quota < 0 ? std::string("max") : std::to_string(quota)) +
                        " " + std::to_string(kPeriodUs));
        } else {
          WriteFile(d + "/cpu.cfs_period_us", std::to_string(kPeriodUs));
          WriteFile(d + "/cpu.cfs_quota_us", std::to_string(quota));
        }
      }
    };
    // v1 refuses a child quota above its parent's: lower the leaf first,
    // raise the parent first.
    try {
      apply({dirs[1], dirs[0]});
    } catch (const std::exception&) {
      apply({dirs[0], dirs[1]});
    }
  }
}

void Cgroups::SetMemoryLimit(const SimPod& pod, std::optional<uint64_t> bytes) {
  for (const Hierarchy& h : hierarchies_) {
    if (!Has(h, "memory")) continue;
    for (const std::string& rel :
         {PodCgroupPath(pod), ContainerCgroupPath(pod)}) {
      const std::string d = h.root + "/" + rel;
      if (h.v2)
        WriteFile(d + "/memory.max", bytes ? std::to_string(*bytes) : "max");
      else
        WriteFile(d + "/memory.limit_in_bytes",
                  bytes ? std::to_string(*bytes) : "-1");
    }
  }
}

uint64_t Cgroups::OomKills(const SimPod& pod) const {
  uint64_t kills = 0;
  for (const Hierarchy& h : hierarchies_) {
    if (!Has(h, "memory")) continue;
    // v2 counts a child's kills in its parents' memory.events too: the
    // container dir's alone, so a kill is not counted twice.
    std::vector<std::string> rels = {ContainerCgroupPath(pod)};
    if (!h.v2) rels.push_back(PodCgroupPath(pod));
    for (const std::string& rel : rels) {
      std::ifstream in(h.root + "/" + rel +
                       (h.v2 ? "/memory.events" : "/memory.oom_control"));
      std::string key;
      uint64_t value = 0;
      while (in >> key >> value)
        if (key == "oom_kill") kills += value;
    }
  }
  return kills;
}

void Cgroups::SetReadBps(const SimPod& pod, const std::string& dev,
                         uint64_t bytes_per_s) {
  SetIoBps(pod, dev, bytes_per_s, "read", "rbps");
}

void Cgroups::SetWriteBps(const SimPod& pod, const std::string& dev,
                          uint64_t bytes_per_s) {
  SetIoBps(pod, dev, bytes_per_s, "write", "wbps");
}

void Cgroups::SetIoBps(const SimPod& pod, const std::string& dev,
                       uint64_t bytes_per_s, const std::string& v1_direction,
                       const std::string& v2_key) {
  for (const Hierarchy& h : hierarchies_) {
    const bool v1 = !h.v2 && Has(h, "blkio");
    if (!v1 && !(h.v2 && Has(h, "io"))) continue;
    for (const std::string& rel :
         {PodCgroupPath(pod), ContainerCgroupPath(pod)}) {
      const std::string d = h.root + "/" + rel;
      if (v1)
        WriteFile(d + "/blkio.throttle." + v1_direction + "_bps_device",
                  dev + " " + std::to_string(bytes_per_s));
      else
        WriteFile(d + "/io.max",
                  dev + " " + v2_key + "=" + std::to_string(bytes_per_s));
    }
  }
}

std::string BlockDeviceOf(const std::string& path) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0 || major(st.st_dev) == 0) return "";
  std::string dev =
      std::to_string(major(st.st_dev)) + ":" + std::to_string(minor(st.st_dev));
  // Throttling works on whole disks: a partition's parent holds its dev.
  const fs::path sys = "/sys/dev/block/" + dev;
  std::error_code ec;
  if (fs::exists(sys / "partition", ec)) {
    std::string parent =
        ReadFile(fs::canonical(sys, ec).parent_path().string() + "/dev");
    while (!parent.empty() && parent.back() == '\n') parent.pop_back();
    if (!parent.empty()) dev = parent;
  }
  return dev;
}

std::vector<std::string> Cgroups::ContainerDirs(const SimPod& pod) const {
  std::vector<std::string> dirs;
  for (const Hierarchy& h : hierarchies_)
    dirs.push_back(h.root + "/" + ContainerCgroupPath(pod));
  return dirs;
}

bool JoinCgroups(const std::vector<std::string>& dirs) {
  char pid[32];
  int len = 0;
  for (pid_t p = getpid(); p > 0 || len == 0; p /= 10)
    pid[len++] = '0' + p % 10;
  for (int i = 0; i < len / 2; ++i) std::swap(pid[i], pid[len - 1 - i]);
  for (const std::string& dir : dirs) {
    std::string path = dir + "/cgroup.procs";
    int fd = open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) return false;
    bool ok = write(fd, pid, len) == len;
    close(fd);
    if (!ok) return false;
  }
  return true;
}

std::vector<std::string> RemoveRunCgroups(
    const std::vector<Hierarchy>& hierarchies, const std::string& run_id) {
  const std::string prefix =
      "kubepods-burstable-pod" + run_id + "_" + kUidMarker + "_";
  // The kubelet-style tree at the root (single node) and under each of the
  // run's node slices (cluster).
  std::vector<std::string> parents;
  for (const Hierarchy& h : hierarchies) {
    parents.push_back(h.root + "/");
    for (const std::string& slice : RunNodeSlices(h, run_id))
      parents.push_back(h.root + "/" + slice + "/");
  }
  // At the root a pod is the run's by its uid; under the run's own node
  // slice every pod is (there uids may come from a real API server).
  std::vector<std::string> pods;
  for (const std::string& parent : parents) {
    const bool own_slice =
        parent.find("/trainsim-" + run_id + "-node") != std::string::npos;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(parent + kBurstable, ec))
      if (e.is_directory() &&
          (own_slice || e.path().filename().string().rfind(prefix, 0) == 0))
        pods.push_back(e.path().string());
  }
  // Kill first in every hierarchy, then wait, then remove leaves before
  // their parents; each wait is bounded.
  std::vector<std::string> dirs;
  for (const std::string& pod : pods) {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(pod, ec))
      if (e.is_directory()) dirs.push_back(e.path().string());
    dirs.push_back(pod);
  }
  // SIGCONT first: a hang fault's stopped process must not outlive the run
  // stopped, whatever ends it.
  for (const std::string& d : dirs)
    for (pid_t pid : Procs(d)) {
      kill(pid, SIGCONT);
      kill(pid, SIGKILL);
    }
  std::vector<std::string> left;
  for (const std::string& d : dirs) {
    bool removed = false;
    for (int attempt = 0; attempt < 50 && !removed; ++attempt) {
      for (pid_t pid : Procs(d)) kill(pid, SIGKILL);
      removed = rmdir(d.c_str()) == 0 || errno == ENOENT;
      if (!removed) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (!removed) left.push_back(d + " (" + std::strerror(errno) + ")");
  }
  // Shared with any other kubelet-style user of this host: removed only
  // when empty, and a failure is expected, not reported.
  for (const std::string& parent : parents) {
    rmdir((parent + kBurstable).c_str());
    rmdir((parent + kKubepods).c_str());
    // A node slice is the run's own: its removal is reported.
    if (parent.find("/trainsim-" + run_id + "-node") != std::string::npos &&
        rmdir(parent.c_str()) != 0 && errno != ENOENT)
      left.push_back(parent + " (" + std::strerror(errno) + ")");
  }
  return left;
}

}  // namespace trainsim
