#include "test_platform.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;

// Runs a shell command; its output and exit code.
std::string Run(const std::string& command, int* rc) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) {
    if (rc) *rc = -1;
    return "popen failed";
  }
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.append(buf, n);
  const int status = ::pclose(pipe);
  if (rc) *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string Platform() {
  return std::string(TRAINSCOPE_SOURCE_DIR) + "/scripts/platform.sh";
}

// Pods only, without request bodies: what a watch or list asked for.
constexpr char kPodAuditPolicy[] = R"(apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  resources: [{group: "", resources: ["pods"]}]
- level: None
)";

}  // namespace

TestPlatform::TestPlatform(TestPlatformOptions options) {
  static std::atomic<int> count{0};
  dir_ = fs::temp_directory_path() /
         ("trainscope-platform-" + std::to_string(::getpid()) + "-" +
          std::to_string(count++));
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  std::string args = options.apiserver_args;
  if (options.audit_pods) {
    // `up` keeps what DIR already holds.
    fs::create_directories(dir_);
    std::ofstream(dir_ / "audit-policy.yaml") << kPodAuditPolicy;
    args += " --audit-policy-file " + (dir_ / "audit-policy.yaml").string() +
            " --audit-log-path " + (dir_ / "audit.log").string();
  }
  int rc = 0;
  error_ = Run("TRAINSCOPE_PLATFORM_APISERVER_ARGS='" + args + "' bash " +
                   Platform() + " up --dir " + dir_.string(),
               &rc);
  for (const char* name : {"etcd.pid", "kube-apiserver.pid"}) {
    int pid = 0;
    if (std::ifstream(dir_ / name) >> pid) pids_.push_back(pid);
  }
  std::ifstream env(dir_ / "env");
  for (std::string line; std::getline(env, line);) {
    if (line.rfind("APISERVER_URL=", 0) == 0) url_ = line.substr(14);
  }
  ok_ = rc == 0 && !url_.empty();
}

TestPlatform::~TestPlatform() {
  int rc = 0;
  Run("bash " + Platform() + " down --dir " + dir_.string(), &rc);
  // `down` ends with SIGKILL for whatever outlived SIGTERM: give the
  // kernel a moment to finish them before reaping.
  for (int pid : pids_) {
    for (int i = 0; i < 300 && ::waitpid(pid, nullptr, WNOHANG) == 0; ++i) {
      ::usleep(10000);
    }
  }
}

std::string TestPlatform::Kubectl(const std::string& args, int* rc) const {
  return Run("kubectl --kubeconfig " + kubeconfig() + " " + args, rc);
}

std::string TestPlatform::Apply(const std::string& manifest, int* rc) const {
  static std::atomic<int> count{0};
  const fs::path file = dir_ / ("apply-" + std::to_string(count++) + ".json");
  std::ofstream(file) << manifest;
  return Kubectl("apply -f " + file.string(), rc);
}

std::string TestPlatform::Create(const std::string& manifest, int* rc) const {
  static std::atomic<int> count{0};
  const fs::path file = dir_ / ("create-" + std::to_string(count++) + ".json");
  std::ofstream(file) << manifest;
  return Kubectl("create -f " + file.string(), rc);
}

bool TestPlatform::StopApiServer() {
  int pid = 0;
  std::ifstream(dir_ / "kube-apiserver.pid") >> pid;
  int rc = 0;
  Run("bash " + Platform() + " stop-apiserver --dir " + dir_.string(), &rc);
  // Ours to reap (subreaper), so that its port is free and its pid gone.
  if (pid > 0) ::waitpid(pid, nullptr, 0);
  return rc == 0;
}

bool TestPlatform::StartApiServer() {
  int rc = 0;
  error_ = Run("bash " + Platform() + " start-apiserver --dir " + dir_.string(),
               &rc);
  int pid = 0;
  if (std::ifstream(dir_ / "kube-apiserver.pid") >> pid) pids_.push_back(pid);
  return rc == 0;
}

std::vector<AuditedRequest> TestPlatform::AuditedPodRequests() const {
  std::vector<AuditedRequest> out;
  std::ifstream in(dir_ / "audit.log");
  for (std::string line; std::getline(in, line);) {
    const auto event = nlohmann::json::parse(line, nullptr, false);
    if (!event.is_object()) continue;  // a line still being written
    AuditedRequest r;
    r.verb = event.value("verb", "");
    r.stage = event.value("stage", "");
    r.request_uri = event.value("requestURI", "");
    r.stage_timestamp = event.value("stageTimestamp", "");
    if (auto status = event.find("responseStatus");
        status != event.end() && status->is_object()) {
      r.code = status->value("code", 0);
    }
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace trainscope::testing
