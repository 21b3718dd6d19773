#include "cgroup/process_states.h"

#include <dirent.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <charconv>
#include <set>
#include <string>
#include <string_view>

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

std::optional<char> StateIn(const std::optional<std::string>& text) {
  if (!text) return std::nullopt;  // gone since it was listed
  // Only the state is wanted: ticks and page size do not matter here.
  return ParseProcStat(*text, 1, 1, std::nullopt).state;
}

std::optional<char> StateOf(const std::filesystem::path& stat_file) {
  return StateIn(ReadSmallFile(stat_file));
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

// The thread IDs in an open /proc/<pid>/task, read again from its start
// with getdents64 into a buffer on the stack (a DIR would allocate 32 KiB
// per process kept). At most kMaxThreads.
std::optional<std::vector<int>> ThreadIds(int task_dir) {
  if (::lseek(task_dir, 0, SEEK_SET) != 0) return std::nullopt;
  std::vector<int> tids;
  alignas(dirent64) char buf[4096];
  for (;;) {
    const ssize_t n = ::getdents64(task_dir, buf, sizeof buf);
    if (n < 0) return std::nullopt;  // the process exited meanwhile
    if (n == 0) return tids;
    for (ssize_t at = 0; at < n;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buf + at);
      at += entry->d_reclen;
      const std::string_view name(entry->d_name);
      int tid = 0;
      if (std::from_chars(name.data(), name.data() + name.size(), tid).ec !=
          std::errc()) {
        continue;  // "." and ".."
      }
      tids.push_back(tid);
      if (tids.size() >= static_cast<size_t>(kMaxThreads)) return tids;
    }
  }
}

}  // namespace

std::optional<ProcessStates> ReadProcessStates(
    const std::filesystem::path& proc, const std::vector<int>& pids) {
  return ProcessStateReader(proc).Read(pids);
}

ProcessStateReader::ProcessStateReader(std::filesystem::path proc,
                                       OpenFileBudget* budget)
    : proc_(std::move(proc)), budget_(budget) {
  // On procfs an exited process's files fail to read; a fixture's would go
  // on reading what they held, so elsewhere nothing is kept.
  struct statfs fs_info {};
  if (::statfs(proc_.c_str(), &fs_info) != 0 ||
      fs_info.f_type != PROC_SUPER_MAGIC) {
    budget_ = nullptr;
  }
}

ProcessStateReader::~ProcessStateReader() {
  for (const auto& [pid, kept] : processes_) {
    for (size_t i = 0; i < kept.Held(); ++i) budget_->Give();
  }
}

bool ProcessStateReader::Keep(UniqueFd& slot, UniqueFd& fd) {
  if (!budget_->Take()) return false;
  slot = std::move(fd);
  return true;
}

void ProcessStateReader::Drop(UniqueFd& slot) {
  if (!slot.valid()) return;
  slot.reset();
  budget_->Give();
}

std::optional<char> ProcessStateReader::MainThreadState(int pid, Kept& kept) {
  if (kept.stat.valid()) {
    if (auto state = StateIn(RereadSmallFile(kept.stat.get()))) return state;
    // Exited (ESRCH): its PID may name another process by now.
    for (auto& [tid, fd] : kept.thread_stats) Drop(fd);
    kept.thread_stats.clear();
    Drop(kept.tasks);
    Drop(kept.stat);
  }
  const std::filesystem::path file = proc_ / std::to_string(pid) / "stat";
  UniqueFd fd(::open(file.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  auto state = StateIn(RereadSmallFile(fd.get()));
  if (state) Keep(kept.stat, fd);
  return state;
}

std::optional<char> ProcessStateReader::ThreadState(Kept& kept, int tid) {
  if (const auto it = kept.thread_stats.find(tid);
      it != kept.thread_stats.end()) {
    if (auto state = StateIn(RereadSmallFile(it->second.get()))) return state;
    Drop(it->second);
    kept.thread_stats.erase(it);
  }
  const std::string name = std::to_string(tid) + "/stat";
  UniqueFd fd(::openat(kept.tasks.get(), name.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  auto state = StateIn(RereadSmallFile(fd.get()));
  if (state && kept.thread_stats.size() < kMaxKeptThreads) {
    UniqueFd slot;
    if (Keep(slot, fd)) kept.thread_stats.emplace(tid, std::move(slot));
  }
  return state;
}

char ProcessStateReader::WithKeptThreads(int pid, Kept& kept, char main_state) {
  if (main_state != 'S') return main_state;
  if (!kept.tasks.valid()) {
    const std::filesystem::path dir = proc_ / std::to_string(pid) / "task";
    UniqueFd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!fd.valid()) return main_state;
    if (!Keep(kept.tasks, fd)) return WithThreads(dir, main_state);
  }
  const auto tids = ThreadIds(kept.tasks.get());
  if (!tids) return main_state;
  bool running = false;
  for (int tid : *tids) {
    const auto state = ThreadState(kept, tid);
    if (state == 'D') return 'D';
    if (state == 'R') running = true;
  }
  const std::set<int> seen(tids->begin(), tids->end());
  // Threads that ended since the last cycle.
  for (auto it = kept.thread_stats.begin(); it != kept.thread_stats.end();) {
    if (seen.contains(it->first)) {
      ++it;
      continue;
    }
    Drop(it->second);
    it = kept.thread_stats.erase(it);
  }
  return running ? 'R' : main_state;
}

std::optional<ProcessStates> ProcessStateReader::Read(
    const std::vector<int>& pids) {
  ProcessStates states;
  bool any = false;
  for (int pid : pids) {
    std::optional<char> state;
    if (budget_ != nullptr) {
      Kept& kept = processes_[pid];
      kept.used = true;
      state = MainThreadState(pid, kept);
      if (state) state = WithKeptThreads(pid, kept, *state);
    } else {
      const std::filesystem::path dir = proc_ / std::to_string(pid);
      state = StateOf(dir / "stat");
      if (state) state = WithThreads(dir / "task", *state);
    }
    if (!state) continue;
    CountProcessState(*state, states);
    any = true;
  }
  if (!any) return std::nullopt;
  return states;
}

void ProcessStateReader::EndCycle() {
  std::erase_if(processes_, [this](const auto& entry) {
    const Kept& kept = entry.second;
    if (kept.used && kept.stat.valid()) return false;
    for (size_t i = 0; i < kept.Held(); ++i) budget_->Give();
    return true;
  });
  for (auto& [pid, kept] : processes_) kept.used = false;
}

}  // namespace trainscope
