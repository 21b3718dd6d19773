#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace trainscope::testing {

// A real etcd and kube-apiserver for one test (scripts/platform.sh up),
// stopped and removed by the destructor, also when the test fails. The
// binaries come from scripts/install-platform.sh's cache. The test process
// becomes their subreaper, so once `down` has stopped them they are reaped
// here instead of lingering as zombies under whatever adopted them.
class TestPlatform {
 public:
  TestPlatform();
  ~TestPlatform();
  TestPlatform(const TestPlatform&) = delete;
  TestPlatform& operator=(const TestPlatform&) = delete;

  // False when `up` failed; error() has its output.
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  const std::string& url() const { return url_; }
  std::string kubeconfig() const { return (dir_ / "kubeconfig").string(); }
  std::string ca_file() const { return (dir_ / "pki/ca.crt").string(); }
  std::string admin_token_file() const {
    return (dir_ / "admin.token").string();
  }
  const std::filesystem::path& dir() const { return dir_; }

  // kubectl against this API server; its output (stdout and stderr) and,
  // in `rc`, its exit code.
  std::string Kubectl(const std::string& args, int* rc = nullptr) const;
  // `kubectl apply` of a manifest given as text.
  std::string Apply(const std::string& manifest, int* rc = nullptr) const;

 private:
  std::filesystem::path dir_;
  std::vector<int> pids_;  // etcd and kube-apiserver, reaped at the end
  std::string url_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace trainscope::testing
