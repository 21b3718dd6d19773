#pragma once

#include <string>
#include <vector>

namespace trainsim {

// Removes everything a run left: its supervisor (for `up` runs), the
// processes in its pod cgroups, the cgroups, netns, veths, bridge (qdiscs
// go with the links), the input files and, unless kept, the run dir.
// Idempotent; returns what could not be removed.
std::vector<std::string> CleanupRun(const std::string& run_id,
                                    bool keep_run_dir);

// Run ids with anything left on this machine: run dirs, netns/links, and
// pod cgroups carrying trainsim's uid marker.
std::vector<std::string> LeftoverRunIds();

// Pid of a run's detached supervisor (`trainsim up`), -1 if none alive.
int SupervisorPid(const std::string& run_id);

}  // namespace trainsim
