#pragma once

#include <sys/types.h>

#include <chrono>
#include <filesystem>
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
// every second. The destructor stops it (SIGTERM, then SIGKILL), also when a
// test fails.
class PrometheusServer {
 public:
  explicit PrometheusServer(const std::vector<std::string>& targets);
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

 private:
  TempDir dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace trainscope::testing
