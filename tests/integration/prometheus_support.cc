#include "prometheus_support.h"

#include <fcntl.h>
#include <httplib.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "agent_process.h"
#include "child_process.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;

std::string ReadAll(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Waits for `pid` until the deadline; the exit code or nullopt.
std::optional<int> WaitPid(pid_t pid, std::chrono::milliseconds deadline) {
  auto end = std::chrono::steady_clock::now() + deadline;
  do {
    int status = 0;
    if (::waitpid(pid, &status, WNOHANG) == pid) {
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  } while (std::chrono::steady_clock::now() < end);
  return std::nullopt;
}

pid_t Spawn(const std::vector<std::string>& argv, const fs::path& out,
            const fs::path& err) {
  std::vector<char*> args;
  std::vector<std::string> copy = argv;
  for (auto& a : copy) args.push_back(a.data());
  args.push_back(nullptr);
  pid_t pid = trainscope::testing::ForkTiedToParent();
  if (pid == 0) {
    int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ::dup2(o, STDOUT_FILENO);
    ::dup2(e, STDERR_FILENO);
    ::execv(args[0], args.data());
    ::_exit(127);
  }
  return pid;
}

void Stop(pid_t pid) {
  if (pid <= 0) return;
  ::kill(pid, SIGTERM);
  if (!WaitPid(pid, std::chrono::seconds(10))) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
  }
}

}  // namespace

TempDir::TempDir() {
  char tmpl[] = "/tmp/trainscope-test-XXXXXX";
  path_ = ::mkdtemp(tmpl);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

CommandResult RunCommand(const std::vector<std::string>& argv,
                         std::chrono::milliseconds deadline) {
  TempDir dir;
  CommandResult r;
  pid_t pid = Spawn(argv, dir.path() / "out", dir.path() / "err");
  auto code = WaitPid(pid, deadline);
  if (!code) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    code = 128 + SIGKILL;
  }
  r.exit_code = *code;
  r.out = ReadAll(dir.path() / "out");
  r.err = ReadAll(dir.path() / "err");
  return r;
}

PrometheusServer::PrometheusServer(const std::vector<std::string>& targets) {
  port_ = FreePort();
  std::ofstream config(dir_.path() / "prometheus.yml");
  config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
         << "scrape_configs:\n  - job_name: trainscope\n"
         << "    static_configs:\n      - targets: [";
  for (size_t i = 0; i < targets.size(); ++i) {
    config << (i ? ", " : "") << "'" << targets[i] << "'";
  }
  config << "]\n";
  config.close();
  pid_ = Spawn({"/usr/bin/prometheus",
                "--config.file=" + (dir_.path() / "prometheus.yml").string(),
                "--storage.tsdb.path=" + (dir_.path() / "data").string(),
                "--web.listen-address=127.0.0.1:" + std::to_string(port_),
                "--log.level=warn"},
               dir_.path() / "stdout.log", dir_.path() / "stderr.log");
}

PrometheusServer::~PrometheusServer() { Stop(pid_); }

std::string PrometheusServer::url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

bool PrometheusServer::WaitReady(std::chrono::milliseconds deadline) const {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (HttpGet(port_, "/-/ready", &status) && status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::optional<double> PrometheusServer::QueryScalar(
    const std::string& promql) const {
  httplib::Client client("127.0.0.1", port_);
  client.set_read_timeout(5, 0);
  auto res = client.Get("/api/v1/query", httplib::Params{{"query", promql}},
                        httplib::Headers{});
  if (!res || res->status != 200) return std::nullopt;
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  const auto& result = j["data"]["result"];
  if (!result.is_array() || result.empty()) return std::nullopt;
  return std::strtod(result[0]["value"][1].get<std::string>().c_str(), nullptr);
}

std::string PrometheusServer::Log() const {
  return ReadAll(dir_.path() / "stderr.log");
}

}  // namespace trainscope::testing
