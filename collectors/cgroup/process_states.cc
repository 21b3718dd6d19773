#include "cgroup/process_states.h"

#include <string>

#include "trainscope/file_util.h"
#include "trainscope/proc_stat.h"

namespace trainscope {

void CountProcessState(char state, ProcessStates& states) {
  switch (state) {
    case 'R':
      ++states.running;
      break;
    case 'S':
    case 'I':
      ++states.sleeping;
      break;
    case 'D':
      ++states.disk_sleep;
      break;
    case 'T':
    case 't':
      ++states.stopped;
      break;
    case 'Z':
    case 'X':
      ++states.zombie;
      break;
    default:
      break;
  }
}

std::optional<ProcessStates> ReadProcessStates(
    const std::filesystem::path& proc, const std::vector<int>& pids) {
  ProcessStates states;
  bool any = false;
  for (int pid : pids) {
    const auto text = ReadSmallFile(proc / std::to_string(pid) / "stat");
    if (!text) continue;  // gone since the cgroup listed it
    // Only the state is wanted: ticks and page size do not matter here.
    const ProcessStat stat = ParseProcStat(*text, 1, 1, std::nullopt);
    if (!stat.state) continue;
    CountProcessState(*stat.state, states);
    any = true;
  }
  if (!any) return std::nullopt;
  return states;
}

}  // namespace trainscope
