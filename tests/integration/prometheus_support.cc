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

// Polls /-/ready (Prometheus, Thanos) until it answers 200.
bool WaitUntilReady(int port, std::chrono::milliseconds deadline) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    int status = 0;
    if (HttpGet(port, "/-/ready", &status) && status == 200) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
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

PrometheusServer::PrometheusServer(
    const std::vector<std::string>& targets,
    const std::map<std::string, std::string>& external_labels) {
  port_ = FreePort();
  std::ofstream config(dir_.path() / "prometheus.yml");
  config << "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n";
  if (!external_labels.empty()) {
    config << "  external_labels:\n";
    for (const auto& [name, value] : external_labels)
      config << "    " << name << ": '" << value << "'\n";
  }
  config << "scrape_configs:\n  - job_name: trainscope\n"
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
  return WaitUntilReady(port_, deadline);
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

std::unique_ptr<ThanosServer> ThanosServer::Sidecar(
    const std::string& thanos, const PrometheusServer& prometheus) {
  std::unique_ptr<ThanosServer> s(new ThanosServer());
  s->Start(thanos, {"sidecar", "--prometheus.url=" + prometheus.url(),
                    "--tsdb.path=" + prometheus.data_dir().string()});
  return s;
}

std::unique_ptr<ThanosServer> ThanosServer::Query(
    const std::string& thanos, const std::vector<std::string>& endpoints) {
  std::unique_ptr<ThanosServer> s(new ThanosServer());
  std::vector<std::string> args = {"query"};
  for (const auto& e : endpoints) args.push_back("--endpoint=" + e);
  s->Start(thanos, std::move(args));
  return s;
}

void ThanosServer::Start(const std::string& thanos,
                         std::vector<std::string> args) {
  http_port_ = FreePort();
  grpc_port_ = FreePort();
  args.insert(args.begin(), thanos);
  args.push_back("--http-address=127.0.0.1:" + std::to_string(http_port_));
  args.push_back("--grpc-address=127.0.0.1:" + std::to_string(grpc_port_));
  args.push_back("--log.level=warn");
  pid_ = Spawn(args, dir_.path() / "stdout.log", dir_.path() / "stderr.log");
}

ThanosServer::~ThanosServer() { Stop(pid_); }

std::string ThanosServer::url() const {
  return "http://127.0.0.1:" + std::to_string(http_port_);
}

std::string ThanosServer::grpc_endpoint() const {
  return "127.0.0.1:" + std::to_string(grpc_port_);
}

bool ThanosServer::WaitReady(std::chrono::milliseconds deadline) const {
  return WaitUntilReady(http_port_, deadline);
}

std::string ThanosServer::Log() const {
  return ReadAll(dir_.path() / "stderr.log");
}

std::string ThanosBinary(const std::string& source_dir) {
  const std::string command =
      "bash '" + source_dir + "/scripts/install-platform.sh' --print";
  FILE* p = ::popen(command.c_str(), "r");
  if (p == nullptr) return "";
  std::string out;
  char buf[512];
  while (std::fgets(buf, sizeof buf, p) != nullptr) out += buf;
  ::pclose(p);
  std::istringstream lines(out);
  std::string name, path;
  while (lines >> name >> path) {
    if (name == "thanos" && ::access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

}  // namespace trainscope::testing
