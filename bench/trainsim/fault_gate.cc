#include "fault_gate.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <thread>
#include <vector>

#include "trainscope/unique_fd.h"

namespace trainsim {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// How often a hang looks whether its line is still there: its end shows
// within this.
constexpr milliseconds kRecheck(200);
// Between steps the file is read at most this often (a PS checks before
// each answer; thousands a second must not each open a file).
constexpr milliseconds kCheckEvery(100);
// The signal that moves a thread stuck in a FUSE read from its
// interruptible wait to the killable one (state D).
constexpr int kNudgeSignal = SIGUSR2;

void OnNudge(int) {}

void InstallNudgeHandler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = OnNudge;
    sigemptyset(&sa.sa_mask);
    ::sigaction(kNudgeSignal, &sa, nullptr);
  });
}

char ThreadState(pid_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), {});
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() ? stat[paren + 2]
                                                               : '?';
}

}  // namespace

std::string FaultFilePath(const std::string& run_id, const std::string& pod) {
  return "/run/trainsim/" + run_id + "/faults/" + pod;
}

FaultOrder ParseFaultLine(const std::string& line) {
  std::istringstream in(line);
  FaultOrder o;
  if (!(in >> o.id >> o.action) || o.id <= 0) return {};
  in >> o.arg >> o.path;
  const bool needs_arg =
      o.action == "blocked_io" || o.action == "checkpoint" || o.action == "oom";
  const bool known =
      needs_arg || o.action == "busy_loop" || o.action == "all_wait";
  if (!known || (needs_arg && o.arg.empty()) ||
      (o.action == "checkpoint" && o.path.empty()))
    return {};
  return o;
}

void WriteFaultFile(const std::string& path, const FaultOrder& order) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << order.id << " " << order.action;
    if (!order.arg.empty()) out << " " << order.arg;
    if (!order.path.empty()) out << " " << order.path;
    out << "\n";
    if (!out) throw std::runtime_error("writing " + tmp + " failed");
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("rename to " + path + ": " + std::strerror(errno));
}

void RemoveFaultFile(const std::string& path) { std::remove(path.c_str()); }

FaultOrder FaultGate::Read() {
  std::ifstream in(path_);
  std::string line;
  if (!std::getline(in, line)) return {};
  return ParseFaultLine(line);
}

bool FaultGate::Still(long id, const StopState& stop) {
  return !stop.stop && Read().id == id;
}

void FaultGate::AtStepBoundary(const StopState& stop) {
  {
    // Cheap when nothing is due: most calls return here.
    std::lock_guard lock(mu_);
    if (Clock::now() < next_check_) return;
    next_check_ = Clock::now() + kCheckEvery;
  }
  const FaultOrder order = Read();
  if (order.id == 0) return;
  // Serving threads queue here behind the one that hangs.
  std::lock_guard lock(mu_);
  if (order.action == "checkpoint") {
    if (!done_.insert(order.id).second) return;
    spdlog::info("[trainsim] checkpoint: writing {} bytes to {}", order.arg,
                 order.path);
    WriteCheckpoint(order.path, std::stoull(order.arg), stop);
    spdlog::info("[trainsim] checkpoint written; steps resume");
    return;
  }
  if (order.action == "oom") {
    spdlog::info("[trainsim] oom: allocating until the OOM killer ends us");
    AllocateUntilKilled(std::stoull(order.arg),
                        [&] { return Still(order.id, stop); });
    spdlog::warn("[trainsim] oom: not killed at {} bytes (no memory limit?)",
                 order.arg);
    return;
  }
  if (!Still(order.id, stop)) return;
  spdlog::info("[trainsim] hang {} begins", order.action);
  Hang(order, stop);
  spdlog::info("[trainsim] hang {} ended", order.action);
}

void FaultGate::Hang(const FaultOrder& order, const StopState& stop) {
  if (order.action == "busy_loop") {
    // Stuck in compute: the thread keeps a CPU busy and exchanges nothing.
    volatile uint64_t x = 1;
    auto next = Clock::now() + kRecheck;
    while (true) {
      for (int k = 0; k < 100000; ++k) x = x * 6364136223846793005ULL + 1;
      if (Clock::now() < next) continue;
      if (!Still(order.id, stop)) return;
      next = Clock::now() + kRecheck;
    }
  }
  while (Still(order.id, stop)) {
    if (order.action == "blocked_io") ReadHungFile(order.arg, stop);
    // all_wait (and a read that failed while the line stays): asleep.
    std::this_thread::sleep_for(kRecheck);
  }
}

void ReadHungFile(const std::string& path, const StopState& stop) {
  InstallNudgeHandler();
  // The mount may still be coming up.
  trainscope::UniqueFd file;
  for (int i = 0; i < 50 && !file.valid() && !stop.stop; ++i) {
    file.reset(open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!file.valid()) std::this_thread::sleep_for(milliseconds(100));
  }
  if (!file.valid()) {
    spdlog::error("[trainsim] blocked_io: cannot open {}: {}", path,
                  std::strerror(errno));
    return;
  }
  const pthread_t self = pthread_self();
  const auto tid = static_cast<pid_t>(syscall(SYS_gettid));
  std::jthread nudger([self, tid](std::stop_token st) {
    // Until the reader shows D (or its read ended).
    for (int i = 0; i < 20 && !st.stop_requested(); ++i) {
      std::this_thread::sleep_for(milliseconds(300));
      if (st.stop_requested() || ThreadState(tid) == 'D') return;
      pthread_kill(self, kNudgeSignal);
    }
  });
  char buf[4096];
  ssize_t n;
  do {
    n = read(file.get(), buf, sizeof buf);
  } while (n < 0 && errno == EINTR && !stop.stop);
  const int err = errno;
  nudger.request_stop();
  nudger.join();
  file.reset();
  spdlog::info("[trainsim] blocked_io: the read of {} returned {} ({})", path,
               n, n < 0 ? std::strerror(err) : "data");
}

void AllocateUntilKilled(uint64_t cap_bytes,
                         const std::function<bool()>& still) {
  constexpr size_t kChunk = 16 << 20;
  const long page = sysconf(_SC_PAGESIZE);
  std::vector<std::unique_ptr<char[]>> held;
  for (uint64_t total = 0; total < cap_bytes && still(); total += kChunk) {
    auto chunk = std::make_unique_for_overwrite<char[]>(kChunk);
    // One write per page: each page faults in and is charged.
    for (size_t off = 0; off < kChunk; off += static_cast<size_t>(page))
      static_cast<volatile char*>(chunk.get())[off] = 1;
    held.push_back(std::move(chunk));
  }
  while (still()) std::this_thread::sleep_for(kRecheck);
}

void WriteCheckpoint(const std::string& path, uint64_t bytes,
                     const StopState& stop) {
  // O_DIRECT: the writes reach the disk (and a cgroup write throttle) as
  // they are made, not later from the page cache; tmpfs has none.
  trainscope::UniqueFd file(open(
      path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0600));
  if (!file.valid())
    file.reset(
        open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!file.valid()) {
    spdlog::error("[trainsim] checkpoint: open {}: {}", path,
                  std::strerror(errno));
    return;
  }
  constexpr size_t kBlock = 1 << 20;
  // O_DIRECT wants a page-aligned buffer.
  const std::unique_ptr<char[], decltype([](char* p) { std::free(p); })> block(
      static_cast<char*>(std::aligned_alloc(4096, kBlock)));
  if (!block) return;
  std::memset(block.get(), 'c', kBlock);
  // Whole blocks (O_DIRECT wants aligned sizes): up to 1 MiB past `bytes`.
  for (uint64_t done = 0; done < bytes && !stop.stop;) {
    const ssize_t w = write(file.get(), block.get(), kBlock);
    if (w <= 0) break;
    done += static_cast<uint64_t>(w);
  }
  fsync(file.get());
  file.reset();
  unlink(path.c_str());
}

}  // namespace trainsim
