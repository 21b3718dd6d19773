// A workload with known proportions for the profiler tests, built with
// frame pointers. Its functions are named so the profile can be checked.
//   profiler_workload cpu SECONDS   spins in hot_alpha / hot_beta / hot_gamma
//                                   for 60% / 30% / 10% of its CPU time
//   profiler_workload rate SECONDS  fixed arithmetic work as fast as it
//                                   can; prints "units_per_second N"
//                                   (bench/profiler: overhead of a profile)
//   profiler_workload offcpu SECONDS each cycle: 30 ms asleep in nanosleep
//                                   (sleep_phase), 20 ms blocked in recv
//                                   (recv_phase), 10 ms spinning
//                                   (spin_phase): 50% / 33% / 17% of wall time
// Prints "ready" once running; exits after SECONDS. In offcpu mode, with
// PROFILER_WORKLOAD_STATS=FILE, it keeps the wall time it has spent in each
// phase so far in FILE ("sleep_ns recv_ns spin_ns total_ns", total counting
// everything since the loop started, the bookkeeping included): the ground
// truth a profile of any window is compared with.
#include <pthread.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>

namespace {

volatile unsigned long sink;

double Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

// Burns this thread's CPU for `ms` (CPU time, not wall time, so the
// proportions hold even when the thread is preempted).
__attribute__((noinline)) void Spin(double ms) {
  const double until = Now(CLOCK_THREAD_CPUTIME_ID) + ms / 1000;
  unsigned long x = 1;
  while (true) {
    for (int i = 0; i < 20000; ++i) x = x * 6364136223846793005ul + 1;
    sink = x;
    if (Now(CLOCK_THREAD_CPUTIME_ID) >= until) break;
  }
}

}  // namespace

// Each call spins a random 0.5x..1.5x of its mean: a fixed 10 ms cycle
// would run in lockstep with a 99 Hz sampler (10.1 ms) and alias.
static double Jitter() {
  static unsigned long state = 88172645463325252ul;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return 0.5 + double(state % 10000) / 10000.0;
}

extern "C" __attribute__((noinline)) void hot_alpha() { Spin(6 * Jitter()); }
extern "C" __attribute__((noinline)) void hot_beta() { Spin(3 * Jitter()); }
extern "C" __attribute__((noinline)) void hot_gamma() { Spin(1 * Jitter()); }

// The blocking calls are made with the syscall instruction right here,
// inside functions that keep frame pointers: Debian's libc is built without
// them, and its wrappers would hide these callers from a frame-pointer
// unwinder (docs/profiling.md, "Limits").
#if defined(__x86_64__)
long RawSyscall6(long n, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 asm("r10") = d;
  register long r8 asm("r8") = e;
  register long r9 asm("r9") = f;
  asm volatile("syscall"
               : "=a"(ret)
               : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
               : "rcx", "r11", "memory");
  return ret;
}
#define TS_SYSCALL(n, a, b, c, d, e, f) RawSyscall6(n, a, b, c, d, e, f)
#else
#define TS_SYSCALL(n, a, b, c, d, e, f) syscall(n, a, b, c, d, e, f)
#endif

// Polls the thread's state in /proc (field 3 of its stat line) until it is
// S, interruptible sleep, for at most a second.
void WaitUntilSleeping(pid_t tid) {
  const std::string path = "/proc/self/task/" + std::to_string(tid) + "/stat";
  for (int i = 0; i < 5000; ++i) {
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      char line[512] = {};
      const size_t n = std::fread(line, 1, sizeof line - 1, f);
      std::fclose(f);
      line[n] = 0;
      // The name in parentheses may hold spaces; the state follows ") ".
      const char* close = std::strrchr(line, ')');
      if (close != nullptr && close[1] == ' ' && close[2] == 'S') return;
    }
    timespec ts{0, 200 * 1000};
    nanosleep(&ts, nullptr);
  }
}

__attribute__((noinline)) void sleep_phase() {
  timespec ts{0, 30 * 1000 * 1000};
  TS_SYSCALL(SYS_nanosleep, long(&ts), 0, 0, 0, 0, 0);
}

__attribute__((noinline)) void recv_phase(int fd) {
  char buf[16];
  TS_SYSCALL(SYS_recvfrom, fd, long(buf), sizeof buf, 0, 0, 0);
}

__attribute__((noinline)) void spin_phase() { Spin(10); }

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s cpu|offcpu SECONDS\n", argv[0]);
    return 2;
  }
  const double seconds = std::atof(argv[2]);
  const double end = Now(CLOCK_MONOTONIC) + seconds;
  std::printf("ready\n");
  std::fflush(stdout);
  if (std::strcmp(argv[1], "rate") == 0) {
    unsigned long units = 0, x = 1;
    double now = Now(CLOCK_MONOTONIC);
    const double start = now;
    while (now < end) {
      for (int i = 0; i < 20000; ++i) x = x * 6364136223846793005ul + 1;
      sink = x;
      if (++units % 64 == 0) now = Now(CLOCK_MONOTONIC);
    }
    std::printf("units_per_second %.1f\n", double(units) / (now - start));
    return 0;
  }
  if (std::strcmp(argv[1], "cpu") == 0) {
    pthread_setname_np(pthread_self(), "ts-hot");
    while (Now(CLOCK_MONOTONIC) < end) {
      hot_alpha();
      hot_beta();
      hot_gamma();
    }
    return 0;
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return 1;
  // The helper answers each request 20 ms after the waiter has blocked in
  // recv, so recv blocks that long. Counting from the request instead would
  // let a loaded machine shorten the block: a waiter preempted between its
  // send and its recv spends part of the 20 ms runnable, not blocked.
  const pid_t waiter_tid = pid_t(syscall(SYS_gettid));
  std::thread helper([fd = fds[1], waiter_tid] {
    pthread_setname_np(pthread_self(), "ts-helper");
    char c;
    while (recv(fd, &c, 1, 0) == 1) {
      WaitUntilSleeping(waiter_tid);
      timespec ts{0, 20 * 1000 * 1000};
      nanosleep(&ts, nullptr);
      if (send(fd, "x", 1, 0) != 1) break;
    }
  });
  pthread_setname_np(pthread_self(), "ts-waiter");
  const char* stats_path = std::getenv("PROFILER_WORKLOAD_STATS");
  double spent[3] = {0, 0, 0};
  const double loop_start = Now(CLOCK_MONOTONIC);
  while (Now(CLOCK_MONOTONIC) < end) {
    const double t0 = Now(CLOCK_MONOTONIC);
    sleep_phase();
    const double t1 = Now(CLOCK_MONOTONIC);
    if (send(fds[0], "r", 1, 0) != 1) break;
    recv_phase(fds[0]);
    const double t2 = Now(CLOCK_MONOTONIC);
    spin_phase();
    const double t3 = Now(CLOCK_MONOTONIC);
    spent[0] += t1 - t0;
    spent[1] += t2 - t1;
    spent[2] += t3 - t2;
    if (stats_path) {
      // Written whole and renamed: a reader never sees half a line.
      const std::string tmp = std::string(stats_path) + ".tmp";
      if (FILE* f = std::fopen(tmp.c_str(), "w")) {
        std::fprintf(f, "%.0f %.0f %.0f %.0f\n", spent[0] * 1e9, spent[1] * 1e9,
                     spent[2] * 1e9, (Now(CLOCK_MONOTONIC) - loop_start) * 1e9);
        std::fclose(f);
        std::rename(tmp.c_str(), stats_path);
      }
    }
  }
  shutdown(fds[0], SHUT_RDWR);
  helper.join();
  return 0;
}
