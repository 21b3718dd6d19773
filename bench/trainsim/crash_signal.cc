#include "crash_signal.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>

namespace trainsim {
namespace {

std::atomic<pid_t> program_group{0};

// Only async-signal-safe calls: kill and _exit.
void OnCrash(int, siginfo_t* info, void*) {
  const pid_t group = program_group.load();
  if (group > 0) ::kill(-group, SIGKILL);
  ::_exit(info->si_value.sival_int);
}

}  // namespace

void InstallCrashHandler() {
  struct sigaction sa {};
  sa.sa_sigaction = OnCrash;
  sa.sa_flags = SA_SIGINFO;
  sigemptyset(&sa.sa_mask);
  ::sigaction(SIGUSR1, &sa, nullptr);
}

void SetCrashProgramGroup(pid_t pgid) { program_group.store(pgid); }

bool SendCrash(pid_t pid, int exit_code) {
  union sigval value {};
  value.sival_int = exit_code;
  return ::sigqueue(pid, SIGUSR1, value) == 0;
}

}  // namespace trainsim
