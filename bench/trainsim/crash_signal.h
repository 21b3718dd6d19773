#pragma once

#include <sys/types.h>

namespace trainsim {

// The crash fault's way into a pod process (docs/trainsim.md, "crash"):
// trainsim queues SIGUSR1 with the exit code as its value, and the pod
// process exits with that code at once, without writing its final stats,
// taking its program's process group down first, as a container's end
// takes everything in it.

// In the pod process, before its threads start.
void InstallCrashHandler();
// In the pod process: the process group of the real program it runs (0:
// none), killed with it.
void SetCrashProgramGroup(pid_t pgid);
// In trainsim: asks pod process `pid` to exit with `exit_code`.
bool SendCrash(pid_t pid, int exit_code);

}  // namespace trainsim
