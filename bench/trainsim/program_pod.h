#pragma once

#include <string>
#include <vector>

#include "layout.h"
#include "pod_env.h"
#include "pod_process.h"

namespace trainsim {

// The argv and environment entries (NAME=value, on top of the inherited
// environment) a program pod runs with: the operator's environment
// (OperatorEnv), then the scenario's program.env, placeholders expanded.
// Throws std::runtime_error on an unknown placeholder.
struct ProgramLaunch {
  std::vector<std::string> argv;
  std::vector<std::string> env;
};
ProgramLaunch MakeProgramLaunch(const Layout& layout, const SimPod& pod,
                                const std::string& repo);

// The repository root for ${REPO}/${PYTHON}: $TRAINSIM_REPO, else the
// nearest ancestor of `start` holding bench/workloads, else "".
std::string FindRepoRoot(const std::string& start);

// A pod of a job with a `program`: runs the program (already inside the
// pod's netns and cgroups) as a child, and every second writes the pod's
// stats file: per peer the bytes the kernel counted on the pod's TCP
// sockets (tcp_info bytes_acked / bytes_received, via sock_diag) and the
// steps the program wrote to TRAINSIM_STEPS_FILE. SIGTERM/SIGINT go on to
// the program (SIGKILL after 5 s). Returns 1 when the program cannot start
// or ends before it is told to stop.
int RunProgramPod(const PodProcessArgs& args, const Layout& layout,
                  const SimPod& self);

}  // namespace trainsim
