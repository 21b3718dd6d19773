#include "pod_process.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <condition_variable>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "cgroups.h"
#include "compute.h"
#include "crash_signal.h"
#include "fault_gate.h"
#include "layout.h"
#include "placement.h"
#include "program_pod.h"
#include "ring_pod.h"
#include "wire.h"

namespace trainsim {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kConnectTimeout(30000);
constexpr milliseconds kDrain(3000);
constexpr uint64_t kMaxRequest = 1ULL << 30;
// ps_sync: a request with this bit set asks PS 0 for the token of the next
// step (the low bits carry the step just finished); PS 0 answers once every
// worker finished that step, as SyncReplicasOptimizer's token queue does.
constexpr uint64_t kTokenFlag = 1ULL << 63;
// A chief (TF2 coordinator) exchanges little: this much per PS per step,
// and per worker step the closure's result.
constexpr uint64_t kChiefBytes = 1024;
// An evaluator reads every variable once per this many step_ms.
constexpr int kEvaluatorEverySteps = 10;
// A free-running job (step_ms 0) has no step time to pace the chief's and
// the evaluator's reads: they take this as their step_ms (a chief reads once
// a second, an evaluator every 10 s) instead of reading back to back.
constexpr int kFreeRunningReadPaceMs = 1000;

double EpochNow() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

// One simulated TF task. Threads: an acceptor, one per accepted connection,
// and (worker) a step loop, with one reader per further PS during a step's
// reads, or (PS) one gradient puller per worker.
class Task {
 public:
  Task(const PodProcessArgs& args, const Scenario& scenario,
       const Layout& layout, const SimPod& self)
      : args_(args),
        scenario_(scenario),
        layout_(layout),
        self_(self),
        slices_(PlaceVariables(*self.job)),
        stats_(self.name, std::string(PodRoleName(self.role)), Peers()),
        gate_(FaultFilePath(args.run_id, self.name)) {}

  ~Task() {
    if (input_fd_ >= 0) close(input_fd_);
    free(input_buf_);
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;

  void Start() {
    listen_fd_ = ListenTcp(self_.job->port);
    Spawn([this] { AcceptLoop(); });
    switch (self_.role) {
      case PodRole::kPs:
        if (BytesOnPs(self_.index) == 0)
          return;  // holds no variable: idle, as in TF
        for (const SimPod& w : layout_.pods)
          if (w.job == self_.job && w.role == PodRole::kWorker)
            Spawn([this, &w] { PullGradients(w, BytesOnPs(self_.index)); });
        break;
      case PodRole::kChief:
      case PodRole::kMaster:
        // The coordinator: fetches each worker step's (small) result and
        // looks at the PS now and then.
        for (const SimPod& w : layout_.pods)
          if (w.job == self_.job && w.role == PodRole::kWorker)
            Spawn([this, &w] { PullGradients(w, kChiefBytes); });
        Spawn([this] { ReadLoop(kChiefBytes, 1); });
        break;
      case PodRole::kEvaluator:
        Spawn([this] { ReadLoop(0, kEvaluatorEverySteps); });
        break;
      case PodRole::kWorker:
        Spawn([this] { StepLoop(); });
        break;
    }
  }

  void Stop() {
    stop_.Request(kDrain);
    cv_.notify_all();
    // Threads spawn threads (the acceptor); join until none is left.
    while (true) {
      std::vector<std::thread> threads;
      {
        std::lock_guard lock(mu_);
        threads.swap(threads_);
      }
      if (threads.empty()) break;
      for (auto& t : threads) t.join();
    }
    close(listen_fd_);
  }

  PodStats& stats() { return stats_; }

 private:
  std::vector<std::string> Peers() const {
    std::vector<std::string> peers;
    for (const SimPod& p : layout_.pods)
      if (p.job == self_.job && p.name != self_.name) peers.push_back(p.name);
    return peers;
  }

  uint64_t BytesOnPs(int ps) const {
    uint64_t total = 0;
    for (const Slice& s : slices_)
      if (s.ps == ps) total += s.bytes;
    return total;
  }

  template <typename F>
  void Spawn(F f) {
    std::lock_guard lock(mu_);
    threads_.emplace_back(std::move(f));
  }

  void AcceptLoop() {
    while (!stop_.stop) {
      std::string ip;
      int fd = AcceptTcp(listen_fd_, &ip);
      if (fd < 0) continue;
      const SimPod* peer = layout_.FindByIp(ip);
      PeerCounters* c = peer ? stats_.Peer(peer->name) : nullptr;
      if (!c) {
        spdlog::warn("[trainsim] {}: connection from unknown {}", self_.name,
                     ip);
        close(fd);
        continue;
      }
      auto conn = std::make_shared<Conn>(fd, c, stop_);
      if (self_.role == PodRole::kPs)
        Spawn([this, conn] { ServeVariables(*conn); });
      else if (self_.role != PodRole::kWorker)
        Spawn([conn] { conn->Drain(); });  // nobody pulls from a chief
      else
        Spawn([this, conn] { ServeGradients(*conn); });
    }
  }

  // PS side of a worker's pull: answer each request with that many bytes.
  void ServeVariables(Conn& conn) {
    uint64_t len;
    while (!stop_.stop && conn.ReadRequest(&len)) {
      // A hung PS stops answering here (docs/trainsim.md "Hangs").
      gate_.AtStepBoundary(stop_);
      if (len & kTokenFlag) {
        if (!GrantToken(conn, len & ~kTokenFlag)) break;
        continue;
      }
      if (len > kMaxRequest || !conn.WriteZeros(len)) break;
    }
    conn.Drain();
  }

  // ps_sync barrier on PS 0: the token for the step after `step` goes out
  // once every worker of the job has finished `step`.
  bool GrantToken(Conn& conn, uint64_t step) {
    {
      std::unique_lock lock(mu_);
      ++barrier_arrived_[step];
      cv_.notify_all();
      cv_.wait(lock, [&] {
        return stop_.stop || barrier_arrived_[step] >= self_.job->workers;
      });
      if (stop_.stop) return false;
    }
    return conn.WriteRequest(step + 1);
  }

  // PS side of the gradient pull: the request waits at the worker until
  // its next gradient exists, as a TF RecvTensor does.
  void PullGradients(const SimPod& worker, const uint64_t bytes) {
    int fd = ConnectTcp(worker.ip, self_.job->port, stop_, kConnectTimeout);
    if (fd < 0) {
      if (!stop_.stop)
        spdlog::error("[trainsim] {}: cannot connect to {}", self_.name,
                      worker.name);
      return;
    }
    Conn conn(fd, stats_.Peer(worker.name), stop_);
    while (!stop_.stop && conn.WriteRequest(bytes) && conn.Discard(bytes)) {
      gate_.AtStepBoundary(stop_);
    }
    conn.Drain();
  }

  // Worker side of the gradient pull.
  void ServeGradients(Conn& conn) {
    {
      std::lock_guard lock(mu_);
      ++gradient_conns_;
    }
    cv_.notify_all();
    uint64_t served = 0, len;
    while (!stop_.stop && conn.ReadRequest(&len) && len <= kMaxRequest) {
      uint64_t step;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_.stop || gradient_step_ > served; });
        if (stop_.stop) break;
        step = gradient_step_;
      }
      if (!conn.WriteZeros(len)) break;
      {
        std::lock_guard lock(mu_);
        served = step;
        ++served_count_[step];
      }
      cv_.notify_all();
    }
    conn.Drain();
  }

  void StepLoop() {
    const Job& job = *self_.job;
    const bool sync = job.kind == JobKind::kPsSync;
    std::vector<std::pair<const SimPod*, std::unique_ptr<Conn>>> ps_conns;
    for (const SimPod& p : layout_.pods) {
      if (p.job != self_.job || p.role != PodRole::kPs ||
          (BytesOnPs(p.index) == 0 && !(sync && p.index == 0)))
        continue;
      int fd = ConnectTcp(p.ip, job.port, stop_, kConnectTimeout);
      if (fd < 0) {
        if (!stop_.stop)
          spdlog::error("[trainsim] {}: cannot connect to {}", self_.name,
                        p.name);
        continue;
      }
      ps_conns.emplace_back(
          &p, std::make_unique<Conn>(fd, stats_.Peer(p.name), stop_));
    }
    // Every PS holding variables pulls our gradients, and so does a chief.
    int want = job.chief;
    for (auto& [ps, conn] : ps_conns) want += BytesOnPs(ps->index) > 0;
    {
      std::unique_lock lock(mu_);
      cv_.wait_for(lock, kConnectTimeout,
                   [&] { return stop_.stop || gradient_conns_ >= want; });
    }
    while (!stop_.stop) {
      gate_.AtStepBoundary(stop_);
      const auto t0 = Clock::now();
      ReadInput();
      PullFromEveryPs(ps_conns);
      ComputeStep(job.compute_ms, job.compute_on, stop_);
      {
        std::unique_lock lock(mu_);
        const uint64_t step = ++gradient_step_;
        cv_.notify_all();
        // Bounded: a PS that went away must not stall the worker forever.
        cv_.wait_for(lock, milliseconds(60000), [&] {
          return stop_.stop || served_count_[step] >= gradient_conns_;
        });
        served_count_.erase(step);
      }
      if (!stop_.stop) stats_.CountStep();
      if (sync && !stop_.stop) WaitForToken(ps_conns);
      if (job.step_ms == 0) continue;  // free-running: the next step now
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, t0 + milliseconds(job.step_ms),
                     [&] { return stop_.stop.load(); });
    }
    for (auto& [ps, conn] : ps_conns) conn->Drain();
  }

  // A step's variable reads, as TF issues them: every RecvTensor at once, so
  // the PS serve theirs in parallel, one slice after another on each PS's
  // connection (a step then waits for its slowest PS, not for their sum).
  void PullFromEveryPs(
      std::vector<std::pair<const SimPod*, std::unique_ptr<Conn>>>& ps_conns) {
    auto pull = [this](const SimPod& ps, Conn& conn) {
      for (const Slice& s : slices_)
        if (s.ps == ps.index && !stop_.stop && conn.WriteRequest(s.bytes))
          conn.Discard(s.bytes);
    };
    std::vector<std::jthread> others;
    for (size_t i = 1; i < ps_conns.size(); ++i)
      if (BytesOnPs(ps_conns[i].first->index) > 0)
        others.emplace_back(pull, std::cref(*ps_conns[i].first),
                            std::ref(*ps_conns[i].second));
    if (!ps_conns.empty()) pull(*ps_conns[0].first, *ps_conns[0].second);
  }

  // ps_sync: no next step before every worker finished this one.
  void WaitForToken(
      std::vector<std::pair<const SimPod*, std::unique_ptr<Conn>>>& ps_conns) {
    for (auto& [ps, conn] : ps_conns) {
      if (ps->index != 0) continue;
      uint64_t granted;
      if (conn->WriteRequest(kTokenFlag | stats_.steps()))
        conn->ReadRequest(&granted);
    }
  }

  // Chief and evaluator: read `bytes` (0: every variable slice) from each
  // PS holding variables, once per `every` step_ms (free-running jobs:
  // kFreeRunningReadPaceMs for step_ms).
  void ReadLoop(uint64_t bytes, int every) {
    const Job& job = *self_.job;
    const int pace_ms = job.step_ms > 0 ? job.step_ms : kFreeRunningReadPaceMs;
    std::vector<std::pair<const SimPod*, std::unique_ptr<Conn>>> ps_conns;
    for (const SimPod& p : layout_.pods) {
      if (p.job != self_.job || p.role != PodRole::kPs ||
          BytesOnPs(p.index) == 0)
        continue;
      int fd = ConnectTcp(p.ip, job.port, stop_, kConnectTimeout);
      if (fd < 0) continue;
      ps_conns.emplace_back(
          &p, std::make_unique<Conn>(fd, stats_.Peer(p.name), stop_));
    }
    while (!stop_.stop) {
      gate_.AtStepBoundary(stop_);
      const auto t0 = Clock::now();
      for (auto& [ps, conn] : ps_conns) {
        if (bytes > 0) {
          if (conn->WriteRequest(bytes)) conn->Discard(bytes);
          continue;
        }
        for (const Slice& s : slices_)
          if (s.ps == ps->index && !stop_.stop && conn->WriteRequest(s.bytes))
            conn->Discard(s.bytes);
      }
      if (!stop_.stop) stats_.CountStep();
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, t0 + milliseconds(int64_t{pace_ms} * every),
                     [&] { return stop_.stop.load(); });
    }
    for (auto& [ps, conn] : ps_conns) conn->Drain();
  }

  const Fault* InputFault() const {
    const double elapsed = EpochNow() - args_.start_epoch_s;
    for (const Fault& f : scenario_.faults)
      if (f.kind == FaultKind::kInputRead && f.pod == self_.name &&
          elapsed >= f.start_s)
        return &f;
    return nullptr;
  }

  // A throttled reader: reads bytes_per_step from a file on disk with
  // O_DIRECT (so the reads reach the device the supervisor throttled and
  // the pod's cgroup accounts them) and paces itself to `mbit` as well.
  void ReadInput() {
    const Fault* f = InputFault();
    if (!f) return;
    constexpr uint64_t kBlock = 1 << 20, kAlign = 4096;
    const uint64_t file_size = std::min<uint64_t>(
        (f->bytes_per_step + kBlock - 1) / kBlock * kBlock, 64ULL << 20);
    if (input_fd_ < 0 && !CreateInput(file_size)) return;
    const auto t0 = Clock::now();
    const double bytes_per_ms = f->mbit * 1e6 / 8 / 1000;
    uint64_t done = 0;
    while (done < f->bytes_per_step && !stop_.stop) {
      const uint64_t left =
          (f->bytes_per_step - done + kAlign - 1) / kAlign * kAlign;
      const uint64_t n = std::min<uint64_t>(kReadChunk, left);
      if (pread(input_fd_, input_buf_, n, done % file_size) <= 0) break;
      done += n;
      std::unique_lock lock(mu_);
      cv_.wait_until(
          lock, t0 + milliseconds(static_cast<int64_t>(done / bytes_per_ms)),
          [&] { return stop_.stop.load(); });
    }
  }

  bool CreateInput(uint64_t size) {
    const std::string path = args_.input_dir + "/" + self_.name + ".input";
    std::error_code ec;
    std::filesystem::create_directories(args_.input_dir, ec);
    {
      int fd =
          open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (fd < 0) return false;
      std::vector<char> block(1 << 20, 'x');
      for (uint64_t done = 0; done < size; done += block.size())
        if (write(fd, block.data(), block.size()) < 0) break;
      fsync(fd);
      close(fd);
    }
    input_fd_ = open(path.c_str(), O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (input_fd_ < 0) {
      // tmpfs and friends: no O_DIRECT; drop the cache and read buffered.
      input_fd_ = open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (input_fd_ < 0) return false;
      posix_fadvise(input_fd_, 0, 0, POSIX_FADV_DONTNEED);
    }
    if (posix_memalign(&input_buf_, 4096, kReadChunk) != 0) return false;
    return true;
  }

  const PodProcessArgs& args_;
  const Scenario& scenario_;
  const Layout& layout_;
  const SimPod& self_;
  const std::vector<Slice> slices_;
  PodStats stats_;
  FaultGate gate_;
  StopState stop_;
  int listen_fd_ = -1;
  int input_fd_ = -1;
  static constexpr uint64_t kReadChunk = 256 * 1024;
  void* input_buf_ = nullptr;

  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::thread> threads_;
  int gradient_conns_ = 0;
  uint64_t gradient_step_ = 0;
  std::map<uint64_t, int> served_count_;
  std::map<uint64_t, int> barrier_arrived_;  // ps_sync, on PS 0
};

}  // namespace

void BlockStopSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

bool WaitForStop(int timeout_ms) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  timespec ts{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  return sigtimedwait(&set, nullptr, &ts) > 0;
}

void EnterPod(const std::string& netns_path,
              const std::vector<std::string>& cgroup_dirs) {
  int fd = open(netns_path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw std::runtime_error("open " + netns_path + ": " +
                             std::strerror(errno));
  int r = setns(fd, CLONE_NEWNET);
  int err = errno;
  close(fd);
  if (r != 0)
    throw std::runtime_error("setns " + netns_path + ": " + std::strerror(err));
  if (!JoinCgroups(cgroup_dirs))
    throw std::runtime_error("joining the pod's cgroups failed: " +
                             std::string(std::strerror(errno)));
}

int RunPodProcess(const PodProcessArgs& args) {
  BlockStopSignals();
  InstallCrashHandler();
  Scenario scenario = LoadScenarioFile(args.scenario_path);
  Layout layout = MakeLayout(scenario, args.run_id);
  const SimPod* self = layout.Find(args.pod);
  if (!self)
    throw std::runtime_error("no pod " + args.pod + " in " +
                             args.scenario_path);
  if (self->job->program) return RunProgramPod(args, layout, *self);
  if (self->job->kind == JobKind::kAllreduce)
    return RunRingPod(args, layout, *self);
  Task task(args, scenario, layout, *self);
  task.Start();
  // Stats are written each second so a crashed run still leaves numbers.
  while (!WaitForStop(1000)) task.stats().WriteFile(args.stats_path);
  task.Stop();
  task.stats().WriteFile(args.stats_path);
  return 0;
}

}  // namespace trainsim
