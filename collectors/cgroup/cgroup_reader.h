#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "cgroup/pod_cgroups.h"
#include "trainscope/snapshot.h"

namespace trainscope {

// Reads the values of one cgroup (pod or container), given relative to the
// hierarchy roots, from wherever each value really is: the v2 file when the
// unified tree has it and it carries the key, else the v1 controller's file.
// On a hybrid host that means CPU usage and PSI from v2, limits, throttling,
// memory and IO from v1. Unreadable files leave values empty; never throws
// for I/O errors.
CgroupSample ReadCgroupSample(const CgroupHierarchies& hierarchies,
                              const std::string& relative_path);

// PIDs from cgroup.procs of the first hierarchy (unified first) whose copy
// of this cgroup lists any.
std::vector<int> ReadCgroupPids(const CgroupHierarchies& hierarchies,
                                const std::string& relative_path);

}  // namespace trainscope
