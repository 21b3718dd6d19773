#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "cgroup/open_file_budget.h"
#include "trainscope/snapshot.h"
#include "trainscope/unique_fd.h"

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

// ReadProcessStates across cycles. On procfs the files read are kept open
// and read again with pread: each process's stat file, its task directory
// (rewound each cycle) and up to kMaxKeptThreads of its threads' stat files.
// A descriptor names the process or thread, not the number, so a reused ID
// is never misread; what no cycle asked for is closed at the cycle's end.
class ProcessStateReader {
 public:
  // `budget` (may be null: nothing kept) lends descriptors for kept files.
  explicit ProcessStateReader(std::filesystem::path proc,
                              OpenFileBudget* budget = nullptr);
  ~ProcessStateReader();
  ProcessStateReader(const ProcessStateReader&) = delete;
  ProcessStateReader& operator=(const ProcessStateReader&) = delete;

  std::optional<ProcessStates> Read(const std::vector<int>& pids);
  // Closes the files of processes not read since the last EndCycle.
  void EndCycle();

 private:
  static constexpr size_t kMaxKeptThreads = 64;
  struct Kept {
    UniqueFd stat;
    UniqueFd tasks;  // the task directory, listed again each cycle
    std::map<int, UniqueFd> thread_stats;
    // Descriptors taken from the budget: only kept ones are held.
    size_t Held() const {
      return (stat.valid() ? 1 : 0) + (tasks.valid() ? 1 : 0) +
             thread_stats.size();
    }
    bool used = false;
  };

  std::optional<char> MainThreadState(int pid, Kept& kept);
  char WithKeptThreads(int pid, Kept& kept, char main_state);
  std::optional<char> ThreadState(Kept& kept, int tid);
  // Keeps `fd` in `slot` when the budget allows; false leaves it to close.
  bool Keep(UniqueFd& slot, UniqueFd& fd);
  void Drop(UniqueFd& slot);

  std::filesystem::path proc_;
  OpenFileBudget* budget_;
  std::map<int, Kept> processes_;
};

}  // namespace trainscope
