#include "kernel_pod.h"

#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include "child_process.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;

std::string RandomHex(size_t n) {
  static std::mt19937_64 rng(std::random_device{}());
  static const char* kHex = "0123456789abcdef";
  std::string s;
  for (size_t i = 0; i < n; ++i) s += kHex[rng() % 16];
  return s;
}

void WriteFile(const fs::path& path, const std::string& value) {
  std::ofstream out(path);
  out << value;
  out.close();
  if (!out)
    throw std::runtime_error("cannot write " + value + " to " + path.string());
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

uint64_t KeyValue(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string k;
  uint64_t v;
  while (in >> k >> v) {
    if (k == key) return v;
  }
  return 0;
}

const fs::path kRoot = "/sys/fs/cgroup";

bool PureV2() { return fs::exists(kRoot / "cgroup.controllers"); }

}  // namespace

fs::path KernelPod::Unified() {
  if (PureV2()) return kRoot;
  if (fs::exists(kRoot / "unified" / "cgroup.controllers")) {
    return kRoot / "unified";
  }
  return {};
}

std::vector<fs::path> KernelPod::V1Controllers() {
  std::vector<fs::path> out;
  if (PureV2()) return out;
  for (const char* c : {"cpu", "cpuacct", "memory", "blkio", "pids"}) {
    if (fs::exists(kRoot / c / "cgroup.procs")) out.push_back(kRoot / c);
  }
  return out;
}

KernelPod::KernelPod() {
  std::string hex = RandomHex(32);
  uid_ = hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) +
         "-" + hex.substr(16, 4) + "-" + hex.substr(20, 12);
  container_id_ = RandomHex(64);
  std::vector<fs::path> hierarchies = V1Controllers();
  if (!Unified().empty()) hierarchies.push_back(Unified());
  for (const auto& h : hierarchies) {
    fs::path dir = h;
    for (const auto& part : fs::path(container_path())) {
      dir /= part;
      if (fs::exists(dir)) continue;
      if (PureV2()) {
        // Children only get controller files when the parent delegates.
        std::ofstream(dir.parent_path() / "cgroup.subtree_control")
            << "+cpu +memory +io +pids";
      }
      fs::create_directory(dir);
      created_.push_back(dir);
    }
  }
}

KernelPod::~KernelPod() {
  for (pid_t pid : children_) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
  // A killed task leaves its cgroup asynchronously; retry briefly.
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      if (::rmdir(it->c_str()) == 0 || errno == ENOENT) break;
      ::usleep(20000);
    }
  }
}

std::string KernelPod::pod_path() const {
  std::string underscored = uid_;
  for (char& c : underscored) {
    if (c == '-') c = '_';
  }
  return "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
         underscored + ".slice";
}

std::string KernelPod::container_path() const {
  return pod_path() + "/cri-containerd-" + container_id_ + ".scope";
}

fs::path KernelPod::In(const fs::path& hierarchy,
                       const std::string& rel) const {
  return hierarchy / rel;
}

void KernelPod::SetCpuLimit(double cores) {
  const int period = 100000;
  const int quota = static_cast<int>(cores * period);
  if (PureV2()) {
    WriteFile(In(kRoot, pod_path()) / "cpu.max",
              std::to_string(quota) + " " + std::to_string(period));
    return;
  }
  WriteFile(In(kRoot / "cpu", pod_path()) / "cpu.cfs_period_us",
            std::to_string(period));
  WriteFile(In(kRoot / "cpu", pod_path()) / "cpu.cfs_quota_us",
            std::to_string(quota));
}

void KernelPod::SetMemoryLimit(uint64_t bytes) {
  if (PureV2()) {
    WriteFile(In(kRoot, pod_path()) / "memory.max", std::to_string(bytes));
    return;
  }
  WriteFile(In(kRoot / "memory", pod_path()) / "memory.limit_in_bytes",
            std::to_string(bytes));
}

pid_t KernelPod::Adopt(pid_t pid) {
  children_.push_back(pid);
  std::vector<fs::path> hierarchies = V1Controllers();
  if (!Unified().empty()) hierarchies.push_back(Unified());
  for (const auto& h : hierarchies) {
    WriteFile(In(h, container_path()) / "cgroup.procs", std::to_string(pid));
  }
  return pid;
}

void KernelPod::MoveIn(pid_t pid) const {
  std::vector<fs::path> hierarchies = V1Controllers();
  if (!Unified().empty()) hierarchies.push_back(Unified());
  for (const auto& h : hierarchies) {
    WriteFile(In(h, container_path()) / "cgroup.procs", std::to_string(pid));
  }
}

pid_t KernelPod::StartBusyLoop() {
  pid_t pid = trainscope::testing::ForkTiedToParent();
  if (pid == 0) {
    volatile uint64_t x = 0;
    for (;;) x = x + 1;
  }
  return Adopt(pid);
}

pid_t KernelPod::StartMemoryHolder(uint64_t bytes) {
  int go[2], done[2];
  if (::pipe(go) != 0 || ::pipe(done) != 0) {
    throw std::runtime_error("pipe failed");
  }
  pid_t pid = trainscope::testing::ForkTiedToParent();
  if (pid == 0) {
    ::close(go[1]);
    ::close(done[0]);
    char c;
    // Touch the memory only once the parent moved us, so it is charged to
    // the pod's cgroup.
    if (::read(go[0], &c, 1) != 1) ::_exit(1);
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) ::_exit(1);
    std::memset(p, 0x5a, bytes);
    if (::write(done[1], "x", 1) != 1) ::_exit(1);
    for (;;) ::pause();
  }
  ::close(go[0]);
  ::close(done[1]);
  Adopt(pid);
  char c;
  bool ok = ::write(go[1], "x", 1) == 1 && ::read(done[0], &c, 1) == 1;
  ::close(go[1]);
  ::close(done[0]);
  if (!ok) throw std::runtime_error("memory holder did not start");
  return pid;
}

double KernelPod::KernelCpuSeconds() const {
  if (!Unified().empty()) {
    std::string stat = ReadFile(In(Unified(), pod_path()) / "cpu.stat");
    if (stat.find("usage_usec") != std::string::npos) {
      return KeyValue(stat, "usage_usec") / 1e6;
    }
  }
  return std::stoull(
             ReadFile(In(kRoot / "cpuacct", pod_path()) / "cpuacct.usage")) /
         1e9;
}

uint64_t KernelPod::KernelMemoryUsageBytes() const {
  if (PureV2())
    return std::stoull(ReadFile(In(kRoot, pod_path()) / "memory.current"));
  return std::stoull(
      ReadFile(In(kRoot / "memory", pod_path()) / "memory.usage_in_bytes"));
}

uint64_t KernelPod::KernelInactiveFileBytes() const {
  if (PureV2()) {
    return KeyValue(ReadFile(In(kRoot, pod_path()) / "memory.stat"),
                    "inactive_file");
  }
  return KeyValue(ReadFile(In(kRoot / "memory", pod_path()) / "memory.stat"),
                  "total_inactive_file");
}

}  // namespace trainscope::testing
