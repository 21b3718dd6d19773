#pragma once

#include <filesystem>
#include <optional>
#include <vector>

#include "trainscope/snapshot.h"

namespace trainscope {

// Counts one /proc state letter (ProcessStat::state) into `states`; a
// letter it does not know (W, P, K on some kernels) counts nowhere.
void CountProcessState(char state, ProcessStates& states);

// The states of `pids` from `proc`/<pid>/stat: its main thread's, except
// that a sleeping main thread with a thread in D (`proc`/<pid>/task/*/stat,
// at most 256 read) counts as D, else with one running as R. A process
// that exits between the cgroup's listing and this read is skipped; empty
// when none was read.
std::optional<ProcessStates> ReadProcessStates(
    const std::filesystem::path& proc, const std::vector<int>& pids);

}  // namespace trainscope
