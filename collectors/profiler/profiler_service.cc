#include "profiler/profiler_service.h"

#include <malloc.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <cmath>

#include "bpf_common/cgroup2.h"
#include "profiler/pod_target.h"
#include "profiler/profile_builder.h"

namespace trainscope::profiler {
namespace {

using Clock = std::chrono::steady_clock;
// How often a running profile looks for new processes in the pod (their
// maps must be read while they live).
constexpr auto kRescan = std::chrono::milliseconds(500);

uint64_t MonotonicNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1000000000ull + uint64_t(ts.tv_nsec);
}

std::string PodKey(const std::string& ns, const std::string& pod) {
  return ns + "/" + pod;
}

ProfileOutcome Failure(int status, std::string message) {
  ProfileOutcome out;
  out.http_status = status;
  out.error = std::move(message);
  return out;
}

}  // namespace

std::optional<ProfileKind> ParseProfileKind(const std::string& text) {
  if (text.empty() || text == "cpu") return ProfileKind::kCpu;
  if (text == "offcpu") return ProfileKind::kOffCpu;
  return std::nullopt;
}

ProfilerService::ProfilerService(ProfilerOptions options)
    : options_(std::move(options)),
      symbolizer_(Symbolizer::Options{.proc = options_.host.proc}) {}

ProfilerService::~ProfilerService() { Stop(); }

Status ProfilerService::Health() {
  std::lock_guard lock(health_mu_);
  if (!health_) {
    health_ = ProbeProfiling();
    if (health_->ok()) {
      spdlog::info("[profiler] perf_event and BPF available");
    } else {
      spdlog::warn("[profiler] profiling unavailable: {}", health_->message());
    }
  }
  return *health_;
}

size_t ProfilerService::running() const {
  std::lock_guard lock(mu_);
  return busy_pods_.size();
}

void ProfilerService::ReapFinished() {
  for (auto it = workers_.begin(); it != workers_.end();) {
    if (it->done->load()) {
      it->thread.join();
      it = workers_.erase(it);
    } else {
      ++it;
    }
  }
}

void ProfilerService::Start(const ProfileRequest& request, const PodInfo& pod,
                            std::function<void(ProfileOutcome)> done) {
  if (Status health = Health(); !health.ok()) {
    done(Failure(503,
                 "profiling unavailable on this node: " + health.message()));
    return;
  }
  const std::string key = PodKey(request.namespace_name, request.pod);
  {
    std::lock_guard lock(mu_);
    ReapFinished();
    if (stopping_) {
      done(Failure(503, "the agent is shutting down"));
      return;
    }
    if (busy_pods_.count(key)) {
      done(Failure(409, "a profile of " + key +
                            " is already running; one at a time per pod"));
      return;
    }
    if (busy_pods_.size() >= static_cast<size_t>(options_.max_concurrent)) {
      done(Failure(429, std::to_string(busy_pods_.size()) +
                            " profiles are running (--profile-max-concurrent " +
                            std::to_string(options_.max_concurrent) +
                            "); retry when one ends"));
      return;
    }
    busy_pods_.insert(key);
    auto finished = std::make_shared<std::atomic<bool>>(false);
    workers_.push_back(
        {std::thread([this, request, pod, key, finished,
                      done = std::move(done)] {
           ProfileOutcome outcome;
           try {
             outcome = RunProfile(request, pod);
           } catch (const std::exception& e) {
             outcome = Failure(500, std::string("profile failed: ") + e.what());
           }
           {
             std::lock_guard worker_lock(mu_);
             busy_pods_.erase(key);
           }
           done(std::move(outcome));
           finished->store(true);
         }),
         finished});
  }
}

ProfileOutcome ProfilerService::Run(const ProfileRequest& request,
                                    const PodInfo& pod) {
  if (Status health = Health(); !health.ok()) {
    return Failure(503,
                   "profiling unavailable on this node: " + health.message());
  }
  return RunProfile(request, pod);
}

void ProfilerService::Stop() {
  std::vector<Worker> workers;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    workers.swap(workers_);
  }
  cancel_cv_.notify_all();
  for (Worker& w : workers) w.thread.join();
}

bool ProfilerService::WaitOrCancelled(Clock::time_point until) {
  std::unique_lock lock(mu_);
  return cancel_cv_.wait_until(lock, until, [this] { return stopping_; });
}

ProfileOutcome ProfilerService::RunProfile(const ProfileRequest& request,
                                           const PodInfo& pod) {
  Cgroup2Target v2;
  if (Status s =
          LocateCgroup2(options_.host.cgroup_root, options_.cgroup2_path, &v2);
      !s.ok()) {
    return Failure(503, "profiling needs cgroup v2: " + s.message());
  }
  PodTarget target;
  if (Status s = ResolvePodTarget(v2.root, v2.root_level, pod, &target);
      !s.ok()) {
    return Failure(404, s.message());
  }
  BpfProfileOptions bpf_options{.kind = request.kind, .hz = request.hz};
  Status error = Status::Ok();
  auto bpf = ProfilerBpf::Attach(bpf_options, &error);
  if (!bpf) return Failure(503, "starting the profiler: " + error.message());
  if (Status s = bpf->SetTargets(target.cgroup_ids, target.pod_levels);
      !s.ok()) {
    return Failure(500, s.message());
  }
  const auto wall_start = std::chrono::system_clock::now();
  const auto start = Clock::now();
  const auto end =
      start + std::chrono::milliseconds(std::llround(request.seconds * 1000));
  // Maps are read while the profile runs: a process that exits before the
  // end still gets its frames resolved.
  std::set<uint32_t> seen;
  bool cancelled = false;
  for (;;) {
    for (uint32_t pid : TargetProcesses(target)) {
      if (seen.insert(pid).second) symbolizer_.CaptureMaps(pid);
    }
    const auto next = std::min(end, Clock::now() + kRescan);
    if (WaitOrCancelled(next)) {
      cancelled = true;
      break;
    }
    if (request.abandoned && request.abandoned->load()) {
      for (uint32_t pid : seen) symbolizer_.ForgetMaps(pid);
      spdlog::info(
          "[profiler] profile of {}/{} stopped after {:.1f} s of {:.1f} s: "
          "its client went away",
          request.namespace_name, request.pod,
          std::chrono::duration<double>(Clock::now() - start).count(),
          request.seconds);
      return Failure(499, "the client closed the connection");
    }
    if (Clock::now() >= end) break;
  }
  std::vector<RawStackCount> raws;
  const Status drained = bpf->Drain(MonotonicNs(), &raws);
  const uint64_t dropped = bpf->dropped();
  bpf.reset();  // detach before the (slower) symbolization
  if (!drained.ok()) return Failure(500, drained.message());

  ProfileOutcome out;
  auto& p = out.profile;
  p.type = request.kind == ProfileKind::kCpu ? "cpu" : "offcpu";
  p.value_type = request.kind == ProfileKind::kCpu ? "samples" : "offcpu";
  p.value_unit = request.kind == ProfileKind::kCpu ? "count" : "nanoseconds";
  p.hz = request.hz;
  p.period_ns =
      request.kind == ProfileKind::kCpu ? 1000000000ll / request.hz : 1;
  p.start_unix_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        wall_start.time_since_epoch())
                        .count();
  p.duration_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start)
          .count();
  // Re-read the maps of processes still alive: libraries loaded during the
  // profile are in the new copy; an exited one keeps its earlier copy.
  std::set<uint32_t> tgids;
  for (const auto& raw : raws) tgids.insert(raw.tgid);
  for (uint32_t pid : tgids) {
    if (!seen.count(pid)) symbolizer_.CaptureMaps(pid);
  }
  AddSamples(raws, pod, target.container_of, symbolizer_, &p);
  for (uint32_t pid : seen) symbolizer_.ForgetMaps(pid);
  for (uint32_t pid : tgids) symbolizer_.ForgetMaps(pid);
  if (cancelled) p.comments.push_back("ended early: the agent is stopping");
  if (dropped) {
    p.comments.push_back(std::to_string(dropped) +
                         " events found the count map full and are missing");
  }
  if (!tgids.empty() && TargetProcesses(target).empty()) {
    p.comments.push_back("the pod's processes exited during the profile");
  }
  // Loading the BPF object parsed the kernel's BTF (megabytes, freed since):
  // give that memory back rather than keep it in the agent's heap.
  malloc_trim(0);
  return out;
}

}  // namespace trainscope::profiler
