#include "test_platform.h"

#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
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

}  // namespace

TestPlatform::TestPlatform() {
  static std::atomic<int> count{0};
  dir_ = fs::temp_directory_path() /
         ("trainscope-platform-" + std::to_string(::getpid()) + "-" +
          std::to_string(count++));
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  int rc = 0;
  error_ = Run("bash " + Platform() + " up --dir " + dir_.string(), &rc);
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

}  // namespace trainscope::testing
