#include "agent_process.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <thread>

#include "child_process.h"
#include "trainscope/unique_fd.h"

namespace trainscope::testing {

int FreePort() {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    return 0;
  }
  socklen_t len = sizeof addr;
  ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len);
  return ntohs(addr.sin_port);
}

AgentProcess::AgentProcess(std::vector<std::string> args,
                           std::vector<std::string> env) {
  char tmpl[] = "/tmp/trainscope-agent-stderr-XXXXXX";
  int fd = ::mkstemp(tmpl);
  stderr_path_ = tmpl;
  std::vector<char*> argv;
  std::string bin = TRAINSCOPE_AGENT_BIN;
  argv.push_back(bin.data());
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_ = trainscope::testing::ForkTiedToParent();
  if (pid_ == 0) {
    ::dup2(fd, STDERR_FILENO);
    ::dup2(fd, STDOUT_FILENO);
    for (auto& entry : env) ::putenv(entry.data());
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ::close(fd);
}

AgentProcess::~AgentProcess() {
  if (pid_ > 0 && !exit_code_) {
    if (!Terminate(std::chrono::seconds(3))) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  ::unlink(stderr_path_.c_str());
}

std::optional<int> AgentProcess::WaitExit(std::chrono::milliseconds deadline) {
  if (exit_code_) return exit_code_;
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      exit_code_ =
          WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      return exit_code_;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return std::nullopt;
}

std::optional<int> AgentProcess::Terminate(std::chrono::milliseconds deadline,
                                           std::chrono::milliseconds* took) {
  auto start = std::chrono::steady_clock::now();
  ::kill(pid_, SIGTERM);
  auto code = WaitExit(deadline);
  if (took) {
    *took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
  }
  return code;
}

bool AgentProcess::WaitHttpOk(int port, const std::string& path,
                              std::chrono::milliseconds deadline) const {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (HttpGet(port, path, &status) && status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

std::string AgentProcess::Stderr() const {
  std::ifstream in(stderr_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::optional<std::string> HttpGet(int port, const std::string& path,
                                   int* status) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1, 0);
  client.set_read_timeout(5, 0);
  auto res = client.Get(path);
  if (!res) return std::nullopt;
  if (status) *status = res->status;
  return res->body;
}

std::vector<std::string> FixtureHostArgs(const std::string& listen,
                                         std::vector<std::string> extra) {
  const std::filesystem::path host =
      std::filesystem::path(TRAINSCOPE_SOURCE_DIR) /
      "tests/fixtures/hosts/v2-systemd";
  std::vector<std::string> args = {
      "--listen",       listen,
      "--interval",     "0.2",
      "--node-name",    "node-a",
      "--discovery",    "file",
      "--pod-file",     (host / "pods.json").string(),
      "--host-proc",    (host / "proc").string(),
      "--host-sys",     (host / "sys").string(),
      "--cgroup-root",  (host / "sys/fs/cgroup").string(),
      "--flows",        "off",
      "--profiler",     "off",
      "--nvml-library", "/nonexistent/libnvidia-ml.so.1"};
  args.insert(args.end(), std::make_move_iterator(extra.begin()),
              std::make_move_iterator(extra.end()));
  return args;
}

}  // namespace trainscope::testing
