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

namespace {

// Threads read per process: a TensorFlow process runs about a hundred.
constexpr int kMaxThreads = 256;

std::optional<char> StateOf(const std::filesystem::path& stat_file) {
  const auto text = ReadSmallFile(stat_file);
  if (!text) return std::nullopt;  // gone since it was listed
  // Only the state is wanted: ticks and page size do not matter here.
  return ParseProcStat(*text, 1, 1, std::nullopt).state;
}

// A process whose main thread sleeps waits on its other threads: one of
// them blocked in IO (a data loader on a hung mount) makes it D, one of
// them running makes it R, the letters a person looking for the rank that
// differs needs.
char WithThreads(const std::filesystem::path& task_dir, char main_state) {
  if (main_state != 'S') return main_state;
  std::error_code ec;
  std::filesystem::directory_iterator it(task_dir, ec), end;
  bool running = false;
  for (int n = 0; !ec && it != end && n < kMaxThreads; it.increment(ec), ++n) {
    const auto state = StateOf(it->path() / "stat");
    if (state == 'D') return 'D';
    if (state == 'R') running = true;
  }
  return running ? 'R' : main_state;
}

}  // namespace

std::optional<ProcessStates> ReadProcessStates(
    const std::filesystem::path& proc, const std::vector<int>& pids) {
  ProcessStates states;
  bool any = false;
  for (int pid : pids) {
    const std::filesystem::path dir = proc / std::to_string(pid);
    const auto state = StateOf(dir / "stat");
    if (!state) continue;
    CountProcessState(WithThreads(dir / "task", *state), states);
    any = true;
  }
  if (!any) return std::nullopt;
  return states;
}

}  // namespace trainscope
