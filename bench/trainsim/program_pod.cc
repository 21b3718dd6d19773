#include "program_pod.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <thread>

#include "crash_signal.h"
#include "sock_diag.h"
#include "stats.h"

extern char** environ;

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr auto kStopGrace = std::chrono::seconds(5);

std::vector<std::string> JobPeers(const Layout& layout, const SimPod& self) {
  std::vector<std::string> peers;
  for (const SimPod& p : layout.pods)
    if (p.job == self.job && p.name != self.name) peers.push_back(p.name);
  return peers;
}

uint64_t ReadSteps(const std::string& path) {
  std::ifstream in(path);
  uint64_t steps = 0;
  if (in >> steps) return steps;
  return 0;
}

// The program as a child in its own process group (so a stop reaches the
// processes it starts); its output goes where ours goes (the pod's log).
pid_t StartProgram(const ProgramLaunch& launch) {
  std::vector<char*> argv, envp;
  for (const std::string& a : launch.argv)
    argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (char** e = environ; *e; ++e) envp.push_back(*e);
  for (const std::string& e : launch.env)
    envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  const pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0)
    throw std::runtime_error(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(126);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execvpe(argv[0], argv.data(), envp.data());
    const char* why = strerror(errno);
    dprintf(2, "[trainsim] cannot start %s: %s\n", argv[0], why);
    _exit(127);
  }
  setpgid(pid, pid);
  return pid;
}

std::string Describe(int status) {
  if (WIFEXITED(status))
    return "exit code " + std::to_string(WEXITSTATUS(status));
  if (WIFSIGNALED(status))
    return "signal " + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  return "status " + std::to_string(status);
}

class ProgramPod {
 public:
  ProgramPod(const PodProcessArgs& args, const Layout& layout,
             const SimPod& self)
      : args_(args),
        layout_(layout),
        self_(self),
        stats_(self.name, std::string(PodRoleName(self.role)),
               JobPeers(layout, self)),
        steps_file_(StepsFilePath(layout.run_id, self.name)) {}

  int Run() {
    std::error_code ec;
    fs::create_directories(fs::path(steps_file_).parent_path(), ec);
    const std::string repo = FindRepoRoot(fs::current_path(ec).string());
    ProgramLaunch launch = MakeProgramLaunch(layout_, self_, repo);
    spdlog::info("[trainsim] {}: starting {}", self_.name, Joined(launch.argv));
    pid_ = StartProgram(launch);
    SetCrashProgramGroup(pid_);
    const auto started = Clock::now();
    int status = 0;
    while (!WaitForStop(1000)) {
      Sample();
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        const double secs =
            std::chrono::duration<double>(Clock::now() - started).count();
        spdlog::error(
            "[trainsim] {}: the program `{}` ended with {} after {:.1f} s, "
            "before the run ended (its output is above)",
            self_.name, launch.argv[0], Describe(status), secs);
        pid_ = -1;
        Sample();
        // As a container ends with its program: 128 + the signal that
        // killed it (137 after the OOM killer's SIGKILL).
        return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
      }
    }
    StopProgram();
    Sample();
    return 0;
  }

 private:
  static std::string Joined(const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& s : v) out += (out.empty() ? "" : " ") + s;
    return out;
  }

  void StopProgram() {
    kill(-pid_, SIGTERM);
    const auto deadline = Clock::now() + kStopGrace;
    int status;
    while (Clock::now() < deadline) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        kill(-pid_, SIGKILL);  // whatever it started and left behind
        return;
      }
      Sample();
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    spdlog::warn("[trainsim] {}: the program ignored SIGTERM for {} s; killed",
                 self_.name, kStopGrace.count());
    kill(-pid_, SIGKILL);
    waitpid(pid_, &status, 0);
  }

  // Kernel byte counts per peer pod, and the program's own step count.
  void Sample() {
    try {
      ledger_.Observe(ListTcpSockets());
    } catch (const std::exception& e) {
      spdlog::warn("[trainsim] {}: {}", self_.name, e.what());
    }
    for (const auto& [ip, bytes] : ledger_.PerRemoteIp()) {
      const SimPod* peer = layout_.FindByIp(ip);
      PeerCounters* c = peer ? stats_.Peer(peer->name) : nullptr;
      if (!c) continue;
      c->tx_bytes = bytes.first;
      c->rx_bytes = bytes.second;
    }
    stats_.steps() = ReadSteps(steps_file_);
    stats_.WriteFile(args_.stats_path);
  }

  const PodProcessArgs& args_;
  const Layout& layout_;
  const SimPod& self_;
  PodStats stats_;
  SocketLedger ledger_;
  const std::string steps_file_;
  pid_t pid_ = -1;
};

}  // namespace

std::string FindRepoRoot(const std::string& start) {
  if (const char* env = getenv("TRAINSIM_REPO"); env && *env) return env;
  std::error_code ec;
  for (fs::path p = fs::absolute(start, ec); !p.empty(); p = p.parent_path()) {
    if (fs::is_directory(p / "bench" / "workloads", ec)) return p.string();
    if (p == p.root_path()) break;
  }
  return "";
}

ProgramLaunch MakeProgramLaunch(const Layout& layout, const SimPod& pod,
                                const std::string& repo) {
  const Program& program = *pod.job->program;
  ProgramLaunch launch;
  for (const std::string& a : program.argv)
    launch.argv.push_back(ExpandPlaceholders(a, layout, pod, repo));
  for (const auto& [k, v] : OperatorEnv(layout, pod))
    launch.env.push_back(k + "=" + v);
  for (const auto& [k, v] : program.env)
    launch.env.push_back(k + "=" + ExpandPlaceholders(v, layout, pod, repo));
  return launch;
}

int RunProgramPod(const PodProcessArgs& args, const Layout& layout,
                  const SimPod& self) {
  ProgramPod pod(args, layout, self);
  return pod.Run();
}

}  // namespace trainsim
