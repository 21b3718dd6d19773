#pragma once

// fork() for a child a test starts: the child gets SIGTERM when the test
// process dies, so a test that aborts (a failed ASSERT in a death path, a
// sanitizer halting on a report, ctest killing it at its timeout) never
// leaves agents, pods or servers running.

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

namespace trainscope::testing {

// fork()'s result, with the child tied to this process's life.
inline pid_t ForkTiedToParent() {
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    // The parent may have died between fork() and prctl().
    if (::getppid() != parent) ::_exit(1);
  }
  return pid;
}

}  // namespace trainscope::testing
