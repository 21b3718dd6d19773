#pragma once

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace trainscope::testing {

// A free TCP port on 127.0.0.1 (bound and released; good enough for tests).
int FreePort();

// Runs the real trainscope-agent binary as a child process. The destructor
// always stops it (SIGTERM, then SIGKILL), so a failing test leaves no agent
// behind.
class AgentProcess {
 public:
  // `env` entries ("NAME=value") are added to the inherited environment.
  explicit AgentProcess(std::vector<std::string> args,
                        std::vector<std::string> env = {});
  ~AgentProcess();
  AgentProcess(const AgentProcess&) = delete;
  AgentProcess& operator=(const AgentProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Polls until `path` answers 200 or the deadline passes.
  bool WaitHttpOk(int port, const std::string& path,
                  std::chrono::milliseconds deadline) const;
  // Sends SIGTERM and waits; returns the exit status and how long it took.
  std::optional<int> Terminate(std::chrono::milliseconds deadline,
                               std::chrono::milliseconds* took = nullptr);
  // Waits for the process to exit on its own (bad flags, port in use).
  std::optional<int> WaitExit(std::chrono::milliseconds deadline);
  // Everything the agent wrote to stderr so far.
  std::string Stderr() const;

 private:
  pid_t pid_ = -1;
  std::string stderr_path_;
  std::optional<int> exit_code_;
};

// The agent on the v2-systemd fixture host (tests/fixtures/hosts): listening
// on `listen` (e.g. "127.0.0.1:9000"), sampling every 0.2 s as node-a, pods
// from the fixture's pods.json, flows and profiler off, no NVML; `extra`
// flags appended (flags not given above: the agent refuses a flag given
// twice).
std::vector<std::string> FixtureHostArgs(const std::string& listen,
                                         std::vector<std::string> extra = {});

// GET http://127.0.0.1:port/path; empty when the request failed.
std::optional<std::string> HttpGet(int port, const std::string& path,
                                   int* status = nullptr);

}  // namespace trainscope::testing
