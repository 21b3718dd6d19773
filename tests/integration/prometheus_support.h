#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace trainscope::testing {

// A directory under /tmp removed (recursively) by the destructor.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;  // 128 + signal when killed
  std::string out;
  std::string err;
};

// Runs `argv` to completion (killed after `deadline`), capturing stdout and
// stderr separately.
CommandResult RunCommand(
    const std::vector<std::string>& argv,
    std::chrono::milliseconds deadline = std::chrono::seconds(60));

// A real Prometheus server (Debian's /usr/bin/prometheus) on 127.0.0.1 with
// its config and TSDB in a temp dir, scraping `targets` ("127.0.0.1:port")
// every second, with `external_labels` (cluster="a": what a Thanos sidecar
// adds to its series). The destructor stops it (SIGTERM, then SIGKILL), also
// when a test fails.
class PrometheusServer {
 public:
  explicit PrometheusServer(
      const std::vector<std::string>& targets,
      const std::map<std::string, std::string>& external_labels = {});
  ~PrometheusServer();
  PrometheusServer(const PrometheusServer&) = delete;
  PrometheusServer& operator=(const PrometheusServer&) = delete;

  int port() const { return port_; }
  std::string url() const;
  // Polls /-/ready.
  bool WaitReady(std::chrono::milliseconds deadline) const;
  // Instant query; the first sample's value, if any.
  std::optional<double> QueryScalar(const std::string& promql) const;
  std::string Log() const;
  std::filesystem::path data_dir() const { return dir_.path() / "data"; }

 private:
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// A real Thanos component (built by scripts/install-platform.sh) on
// 127.0.0.1 with free HTTP and gRPC ports, stopped by the destructor:
// `thanos sidecar` in front of a PrometheusServer (its StoreAPI adds the
// server's external labels), or `thanos query` over sidecars' gRPC
// endpoints, which answers Prometheus's query API.
class ThanosServer {
 public:
  static std::unique_ptr<ThanosServer> Sidecar(
      const std::string& thanos, const PrometheusServer& prometheus);
  static std::unique_ptr<ThanosServer> Query(
      const std::string& thanos, const std::vector<std::string>& endpoints);
  ~ThanosServer();
  ThanosServer(const ThanosServer&) = delete;
  ThanosServer& operator=(const ThanosServer&) = delete;

  std::string url() const;
  std::string grpc_endpoint() const;  // "127.0.0.1:port"
  // Polls /-/ready.
  bool WaitReady(std::chrono::milliseconds deadline) const;
  std::string Log() const;

 private:
  ThanosServer() = default;
  void Start(const std::string& thanos, std::vector<std::string> args);

  TempDir dir_;
  int http_port_ = 0;
  int grpc_port_ = 0;
  pid_t pid_ = -1;
};

// The Thanos binary scripts/install-platform.sh built ("" when it has not).
std::string ThanosBinary(const std::string& source_dir);

}  // namespace trainscope::testing
