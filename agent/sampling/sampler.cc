#include "sampling/sampler.h"

#include <spdlog/spdlog.h>
#include <time.h>

#include <exception>

namespace trainscope {
namespace {

double ThreadCpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9;
}

}  // namespace

Sampler::Sampler(std::vector<CollectorPtr> collectors, HostPaths host,
                 const PodTable& pods, History& history,
                 std::chrono::milliseconds interval)
    : collectors_(std::move(collectors)),
      host_(std::move(host)),
      pods_(pods),
      history_(history),
      interval_(interval) {}

Sampler::~Sampler() { Stop(); }

void Sampler::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable()) return;
  stopping_ = false;
  thread_ = std::thread([this] { Loop(); });
}

void Sampler::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Sampler::Loop() {
  auto next = std::chrono::steady_clock::now();
  for (;;) {
    RunOnce();
    next += interval_;
    auto now = std::chrono::steady_clock::now();
    if (next < now) next = now;  // a slow cycle skips, never bursts
    std::unique_lock lock(mu_);
    if (wake_.wait_until(lock, next, [this] { return stopping_; })) return;
  }
}

std::shared_ptr<const Snapshot> Sampler::RunOnce() {
  std::lock_guard run_lock(run_mu_);
  const double cpu_start = ThreadCpuSeconds();
  auto snapshot = std::make_shared<Snapshot>();
  snapshot->taken_at = std::chrono::system_clock::now();
  snapshot->sequence = ++sequence_;
  snapshot->pods = pods_.Get();
  if (peer_pods_) snapshot->peer_pods = peer_pods_->Get();
  CollectContext ctx{host_, snapshot->pods, snapshot->peer_pods};
  for (auto& collector : collectors_) {
    CollectorRun run;
    run.name = std::string(collector->name());
    auto start = std::chrono::steady_clock::now();
    try {
      run.status = collector->Collect(ctx, *snapshot);
    } catch (const std::exception& e) {
      run.status =
          Status::Error(std::string("unexpected exception: ") + e.what());
    } catch (...) {
      run.status = Status::Error("unexpected non-standard exception");
    }
    run.duration_seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    LogTransition(run);
    snapshot->collectors.push_back(std::move(run));
  }
  history_.Push(snapshot);
  if (after_cycle_) {
    try {
      after_cycle_();
    } catch (const std::exception& e) {
      spdlog::error("[sampler] after-cycle hook failed: {}", e.what());
    }
  }
  cpu_seconds_ = cpu_seconds_ + (ThreadCpuSeconds() - cpu_start);
  ++cycles_;
  return snapshot;
}

void Sampler::LogTransition(const CollectorRun& run) {
  auto current = std::make_pair(run.status.code(), run.status.message());
  auto it = last_status_.find(run.name);
  if (it != last_status_.end() && it->second == current) return;
  const bool first = it == last_status_.end();
  last_status_[run.name] = current;
  switch (run.status.code()) {
    case Status::Code::kOk:
      failure_log_.Clear(run.name);
      if (!first) spdlog::info("[sampler] collector {} recovered", run.name);
      break;
    case Status::Code::kNoData:
      spdlog::info("[sampler] collector {} has nothing to collect: {}",
                   run.name, run.status.message());
      break;
    case Status::Code::kError:
      if (auto line = failure_log_.Pass(run.name, run.status.message())) {
        spdlog::warn("[sampler] collector {} failed: {}", run.name, *line);
      }
      break;
  }
}

double Sampler::cycle_cpu_seconds_total() const { return cpu_seconds_; }
uint64_t Sampler::cycles_total() const { return cycles_; }

}  // namespace trainscope
