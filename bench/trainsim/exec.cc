#include "exec.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace trainsim {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<char*> CArgv(const std::vector<std::string>& argv) {
  std::vector<char*> out;
  for (const std::string& a : argv) out.push_back(const_cast<char*>(a.c_str()));
  out.push_back(nullptr);
  return out;
}

// The supervisor blocks SIGINT/SIGTERM to wait for them synchronously; a
// child must not inherit that mask across exec.
void UnblockSignals() {
  sigset_t all;
  sigemptyset(&all);
  sigprocmask(SIG_SETMASK, &all, nullptr);
}

std::string Join(const std::vector<std::string>& argv) {
  std::string s;
  for (const std::string& a : argv) s += (s.empty() ? "" : " ") + a;
  return s;
}

}  // namespace

CommandResult RunCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds timeout) {
  CommandResult result;
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<char*> cargv = CArgv(argv);
  pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    result.output = std::string("fork: ") + std::strerror(errno);
    return result;
  }
  if (pid == 0) {
    UnblockSignals();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    dup2(fds[1], 1);
    dup2(fds[1], 2);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    execvp(cargv[0], cargv.data());
    _exit(127);
  }
  close(fds[1]);
  const auto deadline = Clock::now() + timeout;
  char buf[4096];
  bool killed = false;
  while (true) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - Clock::now());
    if (left.count() <= 0) {
      kill(pid, SIGKILL);
      killed = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int r =
        poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) continue;
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n <= 0) break;
    if (result.output.size() < 65536) result.output.append(buf, n);
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!killed && WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (killed) result.output += "\n(killed after timeout)";
  return result;
}

void MustRun(const std::vector<std::string>& argv) {
  CommandResult r = RunCommand(argv);
  if (r.exit_code != 0) {
    std::string out = r.output;
    while (!out.empty() && out.back() == '\n') out.pop_back();
    throw std::runtime_error("`" + Join(argv) + "` failed (exit " +
                             std::to_string(r.exit_code) + "): " + out);
  }
}

Subprocess Subprocess::Spawn(const std::vector<std::string>& argv,
                             const std::string& log_path,
                             const std::vector<std::string>& env) {
  std::vector<char*> cargv = CArgv(argv);
  // Built before fork: the child of a threaded process must not allocate.
  std::vector<char*> cenv;
  for (char** e = environ; *e; ++e) cenv.push_back(*e);
  for (const std::string& kv : env)
    cenv.push_back(const_cast<char*>(kv.c_str()));
  cenv.push_back(nullptr);
  int log_fd = -1;
  if (!log_path.empty()) {
    log_fd =
        open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log_fd < 0)
      throw std::runtime_error("open " + log_path + ": " +
                               std::strerror(errno));
  }
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid < 0) {
    if (log_fd >= 0) close(log_fd);
    throw std::runtime_error("fork for `" + Join(argv) +
                             "`: " + std::strerror(errno));
  }
  if (pid == 0) {
    UnblockSignals();
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    // The parent may have died between fork and prctl.
    if (getppid() != parent) _exit(126);
    if (log_fd >= 0) {
      dup2(log_fd, 1);
      dup2(log_fd, 2);
    }
    execvpe(cargv[0], cargv.data(), cenv.data());
    _exit(127);
  }
  if (log_fd >= 0) close(log_fd);
  Subprocess p;
  p.pid_ = pid;
  return p;
}

Subprocess::Subprocess(Subprocess&& other) noexcept
    : pid_(other.pid_), status_(other.status_) {
  other.pid_ = -1;
}

Subprocess& Subprocess::operator=(Subprocess&& other) noexcept {
  if (this != &other) {
    Stop(std::chrono::milliseconds(0));
    pid_ = other.pid_;
    status_ = other.status_;
    other.pid_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() { Stop(std::chrono::seconds(2)); }

bool Subprocess::Running() {
  if (pid_ < 0) return false;
  int status = 0;
  pid_t r = waitpid(pid_, &status, WNOHANG);
  if (r == pid_) {
    status_ = status;
    pid_ = -1;
    return false;
  }
  return r == 0;
}

int Subprocess::Stop(std::chrono::milliseconds grace) {
  if (pid_ < 0) return status_;
  if (grace.count() > 0) {
    kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + grace;
    while (Clock::now() < deadline) {
      if (!Running()) return status_;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  kill(pid_, SIGKILL);
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  status_ = status;
  pid_ = -1;
  return status_;
}

std::string SelfExe() {
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) throw std::runtime_error("readlink /proc/self/exe failed");
  return std::string(buf, n);
}

}  // namespace trainsim
