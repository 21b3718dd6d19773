#include "churn_pods.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <thread>

#include "pod_builder.h"

namespace trainscope::soak {
namespace {

namespace fs = std::filesystem;

double Now() {
  return std::chrono::duration<double>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Removes an empty cgroup directory, waiting for the kernel to let go of a
// just-killed process (bounded). Returns false when it is still there.
bool RemoveDir(const std::string& dir) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (rmdir(dir.c_str()) == 0 || errno == ENOENT) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

ChurnPods::ChurnPods(testing::FakeApiServer& api, std::string run_id,
                     std::string node_name, std::string traffic_to)
    : api_(api),
      run_id_(std::move(run_id)),
      node_(std::move(node_name)),
      traffic_to_(std::move(traffic_to)),
      slice_("trainscope-soak-" + run_id_ + ".slice"),
      cgroups_(trainsim::DetectHierarchies()) {
  // The slice exists before the agent starts: it attaches its eBPF
  // programs there (--cgroup2-path), and falls back to pcap without it.
  for (const trainsim::Hierarchy& h : cgroups_.hierarchies()) {
    const std::string dir = h.root + "/" + slice_;
    if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST)
      throw std::runtime_error("mkdir " + dir + ": " + std::strerror(errno));
  }
}

ChurnPods::~ChurnPods() {
  DeleteAll();
  for (const trainsim::Hierarchy& h : cgroups_.hierarchies()) {
    const std::string top = h.root + "/" + slice_;
    for (const std::string& dir :
         {top + "/kubepods.slice/kubepods-burstable.slice",
          top + "/kubepods.slice", top}) {
      if (!RemoveDir(dir)) leftovers_.push_back(dir);
    }
  }
}

std::string ChurnPods::Cgroup2Slice() const {
  for (const trainsim::Hierarchy& h : cgroups_.hierarchies()) {
    if (h.v2) return h.root + "/" + slice_;
  }
  return "";
}

std::string ChurnPods::Create(int k) {
  char uid[64], container[80];
  std::snprintf(uid, sizeof uid, "%s-50ac-4000-a000-%012x", run_id_.c_str(), k);
  std::snprintf(container, sizeof container, "%s%056x", run_id_.c_str(), k);
  Pod pod;
  pod.sim.name = "churn-" + run_id_ + "-" + std::to_string(k);
  pod.sim.uid = uid;
  pod.sim.container_id = container;
  pod.sim.cgroup_parent = slice_ + "/";
  cgroups_.CreatePod(pod.sim);
  if (!traffic_to_.empty()) pod.process = StartTraffic(pod.sim);

  testing::FakePod fake;
  fake.name = pod.sim.name;
  fake.namespace_name = "soak";
  fake.uid = pod.sim.uid;
  fake.node = node_;
  const int host = 10 + k;
  fake.pod_ip = "198.18." + std::to_string((host >> 8) & 0xff) + "." +
                std::to_string(host & 0xff);
  // Jobs of ten pods, one PS each, as bench/macro's fixture.
  const std::string job = "churn-" + std::to_string(k / 10);
  fake.labels = {
      {"training.kubeflow.org/job-name", job},
      {"training.kubeflow.org/replica-type", k % 10 == 0 ? "ps" : "worker"},
      {"training.kubeflow.org/replica-index", std::to_string(k % 10)}};
  fake.owner_kind = "TFJob";
  fake.owner_name = job;
  fake.containers[0].id = pod.sim.container_id;
  api_.AddPod(fake.Build());
  uid_of_[pod.sim.name] = pod.sim.uid;
  const std::string name = pod.sim.name;
  pods_.emplace(name, std::move(pod));
  return name;
}

void ChurnPods::Delete(const std::string& name) {
  auto it = pods_.find(name);
  if (it == pods_.end()) return;
  if (it->second.process > 0) {
    kill(it->second.process, SIGKILL);
    waitpid(it->second.process, nullptr, 0);
  }
  RemoveCgroups(it->second.sim);
  api_.DeletePod("soak", name);
  deleted_[name] = Now();
  pods_.erase(it);
}

void ChurnPods::DeleteAll() {
  while (!pods_.empty()) Delete(pods_.begin()->first);
}

pid_t ChurnPods::StartTraffic(const trainsim::SimPod& pod) {
  const std::vector<std::string> dirs = cgroups_.ContainerDirs(pod);
  sockaddr_in dst{};
  dst.sin_family = AF_INET;
  // The discard port; nothing listens, which changes nothing the agent sees.
  dst.sin_port = htons(9);
  if (inet_pton(AF_INET, traffic_to_.c_str(), &dst.sin_addr) != 1)
    throw std::runtime_error("bad address " + traffic_to_);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0)
    throw std::runtime_error("fork: " + std::string(strerror(errno)));
  if (pid > 0) return pid;
  // Child: system calls only (the parent has threads).
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent || !trainsim::JoinCgroups(dirs)) _exit(1);
  const int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  static const char payload[256] = {};
  const timespec second{1, 0};
  for (;;) {
    sendto(s, payload, sizeof payload, 0,
           reinterpret_cast<const sockaddr*>(&dst), sizeof dst);
    nanosleep(&second, nullptr);
  }
}

void ChurnPods::RemoveCgroups(const trainsim::SimPod& pod) {
  for (const trainsim::Hierarchy& h : cgroups_.hierarchies()) {
    for (const std::string& rel :
         {trainsim::ContainerCgroupPath(pod), trainsim::PodCgroupPath(pod)}) {
      const std::string dir = h.root + "/" + rel;
      if (!RemoveDir(dir)) leftovers_.push_back(dir);
    }
  }
}

}  // namespace trainscope::soak
