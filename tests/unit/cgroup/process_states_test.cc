#include "cgroup/process_states.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace trainscope {
namespace {

namespace fs = std::filesystem;

TEST(ProcessStatesTest, CountsEachStateLetter) {
  const std::pair<char, ProcessStates> cases[] = {
      {'R', {.running = 1}},
      {'S', {.sleeping = 1}},
      {'I', {.sleeping = 1}},
      {'D', {.disk_sleep = 1}},
      {'T', {.stopped = 1}},
      {'t', {.stopped = 1}},
      {'Z', {.zombie = 1}},
      {'X', {.zombie = 1}},
      {'W', {}},
      {'?', {}},
  };
  for (const auto& [letter, want] : cases) {
    SCOPED_TRACE(letter);
    ProcessStates got;
    CountProcessState(letter, got);
    EXPECT_EQ(got, want);
  }
}

// A /proc tree of our own: names with spaces and parentheses, a PID that
// exited between the cgroup's listing and the read, a truncated file.
TEST(ProcessStatesTest, ReadsAProcTreeAndSkipsWhatIsGone) {
  const fs::path proc = fs::path(::testing::TempDir()) / "process-states-proc";
  fs::remove_all(proc);
  auto write = [&](int pid, const std::string& stat) {
    fs::create_directories(proc / std::to_string(pid));
    std::ofstream(proc / std::to_string(pid) / "stat") << stat;
  };
  write(10, "10 (python3) R 1 10 10 0 -1 4194560 0 0 0 0 5 3 0 0\n");
  write(11, "11 (data loader (2)) D 10 10 10 0 -1 0 0 0 0 0 1 1 0 0\n");
  write(12, "12 (a) b) T 10 10 10 0 -1 0 0 0 0 0 1 1 0 0\n");
  write(13, "13 (cut");  // no closing parenthesis: unreadable, skipped
  const auto got = ReadProcessStates(proc, {10, 11, 12, 13, 99});
  ASSERT_TRUE(got);
  EXPECT_EQ(*got, (ProcessStates{.running = 1, .disk_sleep = 1, .stopped = 1}));
  EXPECT_FALSE(ReadProcessStates(proc, {99}));
  EXPECT_FALSE(ReadProcessStates(proc, {}));
  fs::remove_all(proc);
}

// A sleeping main thread waits on its threads: one in D makes the process
// D (a data loader on a hung mount), else one running makes it R; a main
// thread in any other state keeps its own. A thread that exits while the
// task directory is read is skipped.
TEST(ProcessStatesTest, ASleepingMainThreadTakesItsThreadsState) {
  const fs::path proc = fs::path(::testing::TempDir()) / "process-threads";
  fs::remove_all(proc);
  auto write = [&](int pid, const std::vector<std::pair<int, char>>& threads) {
    const fs::path dir = proc / std::to_string(pid);
    fs::create_directories(dir / "task");
    auto stat = [](int tid, char state) {
      return std::to_string(tid) + " (python3) " + state +
             " 1 1 1 0 -1 0 0 0 0 0 1 1 0 0\n";
    };
    std::ofstream(dir / "stat") << stat(pid, threads.front().second);
    for (const auto& [tid, state] : threads) {
      fs::create_directories(dir / "task" / std::to_string(tid));
      std::ofstream(dir / "task" / std::to_string(tid) / "stat")
          << stat(tid, state);
    }
  };
  write(20, {{20, 'S'}, {21, 'S'}, {22, 'D'}});         // -> D
  write(30, {{30, 'S'}, {31, 'R'}});                    // -> R
  write(40, {{40, 'S'}, {41, 'S'}});                    // -> S
  write(50, {{50, 'T'}, {51, 'D'}});                    // -> T (stopped whole)
  write(60, {{60, 'R'}, {61, 'D'}});                    // -> R (it computes)
  fs::create_directories(proc / "70" / "task" / "71");  // thread gone
  std::ofstream(proc / "70" / "stat")
      << "70 (x) S 1 1 1 0 -1 0 0 0 0 0 1 1 0 0\n";
  const auto got = ReadProcessStates(proc, {20, 30, 40, 50, 60, 70});
  ASSERT_TRUE(got);
  EXPECT_EQ(*got,
            (ProcessStates{
                .running = 2, .sleeping = 2, .disk_sleep = 1, .stopped = 1}));
  fs::remove_all(proc);
}

// The real kernel: a child stopped with SIGSTOP reads as stopped, and
// running again after SIGCONT. The child is killed and reaped whatever
// the assertions say.
TEST(ProcessStatesTest, TheKernelShowsAStoppedChild) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    for (;;) ::pause();
  }
  struct Reap {
    pid_t pid;
    ~Reap() {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reap{child};
  // The state changes once the kernel delivers the signal: poll for it.
  auto reads_within = [&](auto pred) {
    for (int i = 0; i < 200; ++i) {
      const auto s = ReadProcessStates("/proc", {child});
      if (s && pred(*s)) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  };
  ASSERT_EQ(::kill(child, SIGSTOP), 0);
  EXPECT_TRUE(reads_within(
      [](const ProcessStates& s) { return s == ProcessStates{.stopped = 1}; }));
  ASSERT_EQ(::kill(child, SIGCONT), 0);
  // Back in pause(): sleeping.
  EXPECT_TRUE(reads_within([](const ProcessStates& s) {
    return s == ProcessStates{.sleeping = 1};
  }));
}

// Across cycles the reader keeps each process's files open: a child whose
// main thread sleeps while another thread spins reads R in every cycle,
// nothing once it is gone, and every kept descriptor goes back to the
// budget.
TEST(ProcessStatesTest, AKeptReaderFollowsThreadsAndLetsGo) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::thread spin([] {
      const auto end =
          std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (std::chrono::steady_clock::now() < end) {
      }
    });
    spin.detach();
    for (;;) ::pause();
  }
  struct Reap {
    pid_t pid;
    ~Reap() {
      if (pid <= 0) return;
      ::kill(pid, SIGKILL);
      ::waitpid(pid, nullptr, 0);
    }
  } reap{child};
  OpenFileBudget budget(100);
  {
    ProcessStateReader reader("/proc", &budget);
    // Until the main thread sleeps in pause() and the spinning one makes
    // the process R: the task directory and the threads' files are kept
    // then (stat, directory, two threads).
    bool spinning = false;
    for (int i = 0; i < 200 && !spinning; ++i) {
      const auto s = reader.Read({child});
      spinning = s && *s == ProcessStates{.running = 1} && budget.left() <= 96;
      reader.EndCycle();
      if (!spinning) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    ASSERT_TRUE(spinning) << budget.left() << " descriptors left";
    const auto again = reader.Read({child});
    ASSERT_TRUE(again);
    EXPECT_EQ(*again, ProcessStates{.running = 1});
    reader.EndCycle();

    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
    reap.pid = -1;
    EXPECT_FALSE(reader.Read({child}));
    reader.EndCycle();
    EXPECT_EQ(budget.left(), 100u);
  }
  EXPECT_EQ(budget.left(), 100u);
}

}  // namespace
}  // namespace trainscope
