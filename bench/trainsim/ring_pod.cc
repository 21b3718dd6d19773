#include "ring_pod.h"

#include <spdlog/spdlog.h>
#include <unistd.h>

#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>

#include "compute.h"
#include "fault_gate.h"
#include "pod_env.h"
#include "stats.h"
#include "wire.h"

namespace trainsim {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

constexpr milliseconds kConnectTimeout(30000);
constexpr milliseconds kDrain(3000);

std::vector<std::string> JobPeers(const Layout& layout, const SimPod& self) {
  std::vector<std::string> peers;
  for (const SimPod& p : layout.pods)
    if (p.job == self.job && p.name != self.name) peers.push_back(p.name);
  return peers;
}

class RingRank {
 public:
  RingRank(const Layout& layout, const SimPod& self)
      : gate_(FaultFilePath(layout.run_id, self.name)),
        self_(self),
        ranks_(RankOrder(layout, *self.job)),
        rank_(AllreduceRank(self)),
        stats_(self.name, std::string(PodRoleName(self.role)),
               JobPeers(layout, self)) {
    const int n = static_cast<int>(ranks_.size());
    next_ = ranks_[(rank_ + 1) % n];
    prev_ = ranks_[(rank_ + n - 1) % n];
    chunk_ = (self.job->gradient_bytes + n - 1) / n;
  }

  PodStats& stats() { return stats_; }

  void Start() {
    listen_fd_ = ListenTcp(self_.job->port);
    threads_.emplace_back([this] { Run(); });
  }

  void Stop() {
    stop_.Request(kDrain);
    cv_.notify_all();
    for (auto& t : threads_) t.join();
    threads_.clear();
    if (listen_fd_ >= 0) close(listen_fd_);
  }

 private:
  // Connects to the next rank and accepts the previous one, concurrently
  // (every rank does both, so neither may wait for the other first).
  bool Connect() {
    std::thread out([this] {
      int fd = ConnectTcp(next_->ip, self_.job->port, stop_, kConnectTimeout);
      if (fd >= 0)
        to_next_ = std::make_unique<Conn>(fd, stats_.Peer(next_->name), stop_);
    });
    const auto deadline = Clock::now() + kConnectTimeout;
    while (!stop_.stop && !from_prev_ && Clock::now() < deadline) {
      std::string ip;
      int fd = AcceptTcp(listen_fd_, &ip);
      if (fd < 0) continue;
      if (ip != prev_->ip) {
        spdlog::warn("[trainsim] {}: ring connection from {} (expected {})",
                     self_.name, ip, prev_->ip);
        close(fd);
        continue;
      }
      from_prev_ = std::make_unique<Conn>(fd, stats_.Peer(prev_->name), stop_);
    }
    out.join();
    if (!to_next_ || !from_prev_) {
      if (!stop_.stop)
        spdlog::error("[trainsim] {}: ring incomplete (to {}: {}, from {}: {})",
                      self_.name, next_->name, to_next_ ? "ok" : "failed",
                      prev_->name, from_prev_ ? "ok" : "failed");
      return false;
    }
    return true;
  }

  // The sending half: one chunk per requested round, so a round's send and
  // receive overlap as in a real ring (chunks larger than socket buffers
  // would otherwise deadlock).
  void SendLoop() {
    uint64_t done = 0;
    while (true) {
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_.stop || send_goal_ > done; });
        if (stop_.stop) return;
      }
      if (!to_next_->WriteZeros(chunk_)) return;
      {
        std::lock_guard lock(mu_);
        sent_ = ++done;
      }
      cv_.notify_all();
    }
  }

  void Run() {
    if (!Connect()) return;
    std::thread sender([this] { SendLoop(); });
    const Job& job = *self_.job;
    const int rounds = 2 * (static_cast<int>(ranks_.size()) - 1);
    uint64_t goal = 0;
    while (!stop_.stop) {
      gate_.AtStepBoundary(stop_);
      const auto t0 = Clock::now();
      ComputeStep(job.compute_ms, job.compute_on, stop_);
      bool ok = true;
      for (int r = 0; r < rounds && ok && !stop_.stop; ++r) {
        {
          std::lock_guard lock(mu_);
          send_goal_ = ++goal;
        }
        cv_.notify_all();
        ok = from_prev_->Discard(chunk_);
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stop_.stop || sent_ >= goal; });
      }
      if (!ok || stop_.stop) break;
      stats_.CountStep();
      if (job.step_ms == 0) continue;  // free-running: the next step now
      std::unique_lock lock(mu_);
      cv_.wait_until(lock, t0 + milliseconds(job.step_ms),
                     [&] { return stop_.stop.load(); });
    }
    if (!stop_.stop) {
      // A neighbour that stopped first closes the ring; not an error then.
      spdlog::warn("[trainsim] {}: the ring closed", self_.name);
      stop_.Request(kDrain);
      cv_.notify_all();
    }
    sender.join();
    to_next_->Drain();
    from_prev_->Drain();
  }

  FaultGate gate_;
  const SimPod& self_;
  const std::vector<const SimPod*> ranks_;
  const int rank_;
  const SimPod* next_ = nullptr;
  const SimPod* prev_ = nullptr;
  uint64_t chunk_ = 0;
  PodStats stats_;
  StopState stop_;
  int listen_fd_ = -1;
  std::unique_ptr<Conn> to_next_, from_prev_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::condition_variable cv_;
  uint64_t send_goal_ = 0, sent_ = 0;
};

}  // namespace

int RunRingPod(const PodProcessArgs& args, const Layout& layout,
               const SimPod& self) {
  RingRank rank(layout, self);
  rank.Start();
  while (!WaitForStop(1000)) rank.stats().WriteFile(args.stats_path);
  rank.Stop();
  rank.stats().WriteFile(args.stats_path);
  return 0;
}

}  // namespace trainsim
