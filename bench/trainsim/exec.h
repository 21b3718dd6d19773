#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace trainsim {

struct CommandResult {
  int exit_code = -1;  // -1: did not run or was killed
  std::string output;  // stdout and stderr together
};

// Runs argv[0] (PATH lookup) and waits at most `timeout`; killed after it.
CommandResult RunCommand(
    const std::vector<std::string>& argv,
    std::chrono::milliseconds timeout = std::chrono::seconds(10));
// Like RunCommand, but throws std::runtime_error with the command and its
// output when it fails.
void MustRun(const std::vector<std::string>& argv);

// A child process that is killed and reaped when this object dies. The
// child also gets SIGKILL when the supervisor dies (PR_SET_PDEATHSIG), so a
// SIGKILLed trainsim leaves no traffic running.
class Subprocess {
 public:
  Subprocess() = default;
  // Output goes to `log_path` ("" = inherit); `env` ("K=V") is added to
  // the environment. argv[0] is looked up in PATH when it has no slash.
  static Subprocess Spawn(const std::vector<std::string>& argv,
                          const std::string& log_path,
                          const std::vector<std::string>& env = {});
  Subprocess(Subprocess&& other) noexcept;
  Subprocess& operator=(Subprocess&& other) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // The wait status once Running() or Stop() reaped it (-1 before).
  int status() const { return status_; }
  bool Running();
  // SIGTERM, wait up to `grace`, then SIGKILL; returns the exit status.
  int Stop(std::chrono::milliseconds grace = std::chrono::seconds(5));

 private:
  pid_t pid_ = -1;
  int status_ = -1;
};

// The path of the running executable (children re-exec it).
std::string SelfExe();

}  // namespace trainsim
