#include "flows_lab.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "agent_process.h"
#include "child_process.h"
#include "kernel_pod.h"

namespace trainscope::testing {
namespace {
std::optional<int> WaitPid(pid_t pid, bool* reaped,
                           std::chrono::milliseconds deadline);
}  // namespace

bool Sh(const std::string& command) {
  return std::system((command + " >/dev/null 2>&1").c_str()) == 0;
}

std::string ShOut(const std::string& command) {
  std::string out;
  FILE* p = ::popen((command + " 2>/dev/null").c_str(), "r");
  if (!p) return out;
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) {
    out.append(buf.data(), n);
  }
  ::pclose(p);
  return out;
}

std::optional<std::set<int>> BpfObjectIds(
    const std::string& bpftool_list,
    const std::function<bool(const std::string&)>& matches) {
  const auto list = nlohmann::json::parse(ShOut(bpftool_list), nullptr,
                                          /*allow_exceptions=*/false);
  if (!list.is_array()) return std::nullopt;
  std::set<int> ids;
  for (const auto& e : list) {
    if (matches(e.value("name", ""))) ids.insert(e.value("id", -1));
  }
  return ids;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool ListensOn(const std::string& proc_net_tcp, int port) {
  // Each socket line: "sl local_address rem_address st ...", the address as
  // HEXADDR:HEXPORT and the state 0A for LISTEN (include/net/tcp_states.h).
  std::istringstream lines(proc_net_tcp);
  std::string line;
  std::getline(lines, line);  // the header
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string slot, local, remote, state;
    if (!(fields >> slot >> local >> remote >> state)) continue;
    const auto colon = local.rfind(':');
    if (colon == std::string::npos || state != "0A") continue;
    if (std::strtol(local.c_str() + colon + 1, nullptr, 16) == port) {
      return true;
    }
  }
  return false;
}

std::vector<std::string> IperfClientArgs(const std::string& server_ip,
                                         int port) {
  return {"iperf3", "-c", server_ip, "-p", std::to_string(port), "-t",
          "1",      "-b", "16M",     "-J", "--connect-timeout",  "3000"};
}

std::optional<double> IperfReceivedBytes(const std::string& client_json) {
  const auto j = nlohmann::json::parse(client_json, nullptr, false);
  if (!j.is_object() || !j.contains("end") ||
      !j["end"].contains("sum_received") ||
      !j["end"]["sum_received"].contains("bytes") ||
      !j["end"]["sum_received"]["bytes"].is_number())
    return std::nullopt;
  return j["end"]["sum_received"]["bytes"].get<double>();
}

bool WaitListening(pid_t pid, int port, std::chrono::milliseconds deadline) {
  const std::string net = "/proc/" + std::to_string(pid) + "/net/";
  const auto until = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < until) {
    if (ListensOn(Slurp(net + "tcp"), port) ||
        ListensOn(Slurp(net + "tcp6"), port)) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

NetnsLab::NetnsLab(int pods) {
  // pid-derived names keep parallel test binaries apart; interface names
  // must stay within 15 characters.
  const int tag = ::getpid() % 100000;
  const int subnet = 20 + ::getpid() % 200;
  bridge_ = "tsfb" + std::to_string(tag);
  if (!Sh("ip link add " + bridge_ + " type bridge && ip link set " + bridge_ +
          " up")) {
    throw std::runtime_error("cannot create bridge " + bridge_);
  }
  for (int i = 0; i < pods; ++i) {
    const std::string suffix = std::string(1, static_cast<char>('a' + i));
    const std::string ns = "trainscope-flows-" + std::to_string(tag) + suffix;
    const std::string host = "tsfh" + std::to_string(tag) + suffix;
    const std::string peer = "tsfp" + std::to_string(tag) + suffix;
    const std::string ip =
        "198.19." + std::to_string(subnet) + "." + std::to_string(10 + i);
    netns_.push_back(ns);
    host_veths_.push_back(host);
    ips_.push_back(ip);
    const bool ok =
        Sh("ip netns add " + ns) &&
        Sh("ip link add " + host + " type veth peer name " + peer) &&
        Sh("ip link set " + peer + " netns " + ns) &&
        Sh("ip link set " + host + " master " + bridge_ + " up") &&
        Sh("ip -n " + ns + " link set lo up") &&
        Sh("ip -n " + ns + " link set " + peer + " name eth0") &&
        Sh("ip -n " + ns + " addr add " + ip + "/24 dev eth0") &&
        Sh("ip -n " + ns + " link set eth0 up");
    if (!ok) throw std::runtime_error("cannot set up netns " + ns);
  }
}

NetnsLab::~NetnsLab() {
  for (const auto& ns : netns_) Sh("ip netns del " + ns);
  for (const auto& veth : host_veths_) Sh("ip link del " + veth);
  Sh("ip link del " + bridge_);
}

PodProcess::PodProcess(const KernelPod& pod, const std::string& netns,
                       const std::vector<std::string>& argv,
                       const std::string& stdout_path)
    : PodProcess([&pod](pid_t pid) { pod.MoveIn(pid); }, netns, argv,
                 stdout_path) {}

PodProcess::PodProcess(const std::function<void(pid_t)>& join,
                       const std::string& netns,
                       const std::vector<std::string>& argv,
                       const std::string& stdout_path) {
  int go[2];
  if (::pipe(go) != 0) throw std::runtime_error("pipe failed");
  pid_ = trainscope::testing::ForkTiedToParent();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    ::close(go[1]);
    char c;
    if (::read(go[0], &c, 1) != 1) ::_exit(127);
    int fd = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<std::string> full = {"ip", "netns", "exec", netns};
    full.insert(full.end(), argv.begin(), argv.end());
    std::vector<char*> args;
    for (auto& a : full) args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp("ip", args.data());
    ::_exit(127);
  }
  ::close(go[0]);
  try {
    join(pid_);
  } catch (...) {
    ::close(go[1]);
    throw;
  }
  if (::write(go[1], "x", 1) != 1) {
    ::close(go[1]);
    throw std::runtime_error("cannot release child");
  }
  ::close(go[1]);
}

PodProcess::~PodProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

std::optional<int> PodProcess::Wait(std::chrono::milliseconds deadline) {
  return WaitPid(pid_, &reaped_, deadline);
}

namespace {

std::optional<int> WaitPid(pid_t pid, bool* reaped,
                           std::chrono::milliseconds deadline) {
  auto until = std::chrono::steady_clock::now() + deadline;
  while (!*reaped) {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      *reaped = true;
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    if (std::chrono::steady_clock::now() > until) return std::nullopt;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return std::nullopt;
}

}  // namespace

GuaranteedV2Pod::GuaranteedV2Pod() {
  const std::filesystem::path v2 = KernelPod::Unified();
  if (v2.empty()) throw std::runtime_error("no cgroup v2 hierarchy");
  static int counter = 0;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%08x-0000-4000-8000-%012x", ::getpid(),
                ++counter);
  uid_ = buf;
  std::string underscored = uid_;
  for (char& c : underscored) {
    if (c == '-') c = '_';
  }
  std::snprintf(buf, sizeof buf, "%08x", ::getpid());
  container_id_ = std::string(56, 'c') + buf;
  container_dir_ = v2 / "kubepods.slice" /
                   ("kubepods-pod" + underscored + ".slice") /
                   ("cri-containerd-" + container_id_ + ".scope");
  std::filesystem::path dir = v2;
  for (const auto& part : std::filesystem::relative(container_dir_, v2)) {
    dir /= part;
    if (std::filesystem::exists(dir)) continue;
    std::filesystem::create_directory(dir);
    created_.push_back(dir);
  }
}

GuaranteedV2Pod::~GuaranteedV2Pod() {
  for (auto it = created_.rbegin(); it != created_.rend(); ++it) {
    for (int attempt = 0; attempt < 50; ++attempt) {
      if (::rmdir(it->c_str()) == 0 || errno == ENOENT) break;
      ::usleep(20000);
    }
  }
}

void GuaranteedV2Pod::MoveIn(pid_t pid) const {
  std::ofstream out(container_dir_ / "cgroup.procs");
  out << pid;
  out.close();
  if (!out) throw std::runtime_error("cannot move " + std::to_string(pid));
}

ChildProcess::ChildProcess(const std::vector<std::string>& argv,
                           const std::string& stdout_path) {
  pid_ = trainscope::testing::ForkTiedToParent();
  if (pid_ < 0) throw std::runtime_error("fork failed");
  if (pid_ == 0) {
    int fd = ::open(stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
    }
    std::vector<std::string> copy = argv;
    std::vector<char*> args;
    for (auto& a : copy) args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
}

ChildProcess::~ChildProcess() {
  if (pid_ > 0 && !reaped_) {
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
}

void ChildProcess::Signal(int sig) {
  if (pid_ > 0 && !reaped_) ::kill(pid_, sig);
}

std::optional<int> ChildProcess::Wait(std::chrono::milliseconds deadline) {
  return WaitPid(pid_, &reaped_, deadline);
}

void WaitSamplerCycles(int port, int more) {
  std::optional<double> start;
  for (int i = 0; i < 80; ++i) {
    if (auto m = HttpGet(port, "/metrics")) {
      auto c = MetricValue(*m, "trainscope_sampler_cycles_total", {});
      if (c && !start) start = c;
      if (c && start && *c >= *start + more) return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

nlohmann::json KernelPodJson(const KernelPod& pod, const std::string& ns,
                             const std::string& name, const std::string& ip) {
  return {{"metadata", {{"name", name}, {"namespace", ns}, {"uid", pod.uid()}}},
          {"spec", {{"nodeName", "node-a"}, {"containers", {{{"name", "m"}}}}}},
          {"status",
           {{"phase", "Running"},
            {"podIP", ip},
            {"podIPs", {{{"ip", ip}}}},
            {"containerStatuses",
             {{{"name", "m"},
               {"containerID", "containerd://" + pod.container_id()}}}}}}};
}

}  // namespace trainscope::testing
