#pragma once

// For a child a test forks: it gets SIGTERM when the test process dies, so
// a test that aborts (a failed ASSERT in a death path, a sanitizer halting
// on a report, ctest killing it at its timeout) never leaves agents, pods
// or servers running. Call it in the child right after fork(), with the
// parent's pid taken before the fork.

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

namespace trainscope::testing {

inline void ExitWithParent(pid_t parent) {
  ::prctl(PR_SET_PDEATHSIG, SIGTERM);
  // The parent may have died between fork() and prctl().
  if (::getppid() != parent) ::_exit(1);
}

}  // namespace trainscope::testing
