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
struct TestPlatformOptions {
  // More kube-apiserver flags (TRAINSCOPE_PLATFORM_APISERVER_ARGS):
  // "--watch-cache-sizes pods#0", "--etcd-compaction-interval 2s".
  std::string apiserver_args;
  // Every request on pods in DIR/audit.log (the audit backend, Metadata
  // level), the only record of the query a client's watch asked for.
  bool audit_pods = false;
};

// One request on pods, from the audit log.
struct AuditedRequest {
  std::string verb;             // "list", "watch", "create", ...
  std::string stage;            // "ResponseStarted", "ResponseComplete"
  std::string request_uri;      // path and query as the client sent them
  std::string stage_timestamp;  // RFC 3339 with microseconds
  int code = 0;
};

class TestPlatform {
 public:
  explicit TestPlatform(TestPlatformOptions options = {});
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
  // `kubectl create` of a manifest given as text: one request per object,
  // no read first (many pods at once).
  std::string Create(const std::string& manifest, int* rc = nullptr) const;

  // Takes kube-apiserver away (etcd keeps running) and brings it back on
  // the same port with the same flags; true when it is ready again.
  bool StopApiServer();
  bool StartApiServer();

  // The pod requests audited so far (audit_pods), oldest first.
  std::vector<AuditedRequest> AuditedPodRequests() const;

 private:
  std::filesystem::path dir_;
  std::vector<int> pids_;  // etcd and kube-apiserver, reaped at the end
  std::string url_;
  bool ok_ = false;
  std::string error_;
};

}  // namespace trainscope::testing
