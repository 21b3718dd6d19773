#include "profiler/continuous_profiler.h"

#include <set>

#include "bpf_common/cgroup2.h"
#include "kube/pod_cgroups.h"
#include "profiler.h"
#include "profiler/pod_target.h"

namespace trainscope::profiler {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kRecapture = std::chrono::seconds(60);
constexpr auto kForget = std::chrono::seconds(180);
constexpr int kRetargetEvery = 12;

}  // namespace

ContinuousProfiler::ContinuousProfiler(ContinuousOptions options)
    : options_(std::move(options)),
      // Its own, smaller cache: on-demand profiles forget their processes'
      // maps when they end, this one keeps them between cycles.
      symbolizer_(Symbolizer::Options{.proc = options_.host.proc,
                                      .max_files = 128,
                                      .max_bytes = 16ull << 20}),
      window_(options_.window, options_.functions_per_drain),
      waits_(options_.window, options_.functions_per_drain) {}

ContinuousProfiler::~ContinuousProfiler() = default;

Status ContinuousProfiler::Retarget(const PodList& pods) {
  Cgroup2Target v2;
  if (Status s =
          LocateCgroup2(options_.host.cgroup_root, options_.cgroup2_path, &v2);
      !s.ok()) {
    return s;
  }
  std::map<std::string, const PodInfo*> training;
  for (const PodInfo& pod : pods) {
    if (pod.role != Role::kUnknown) training[pod.uid] = &pod;
  }
  std::vector<uint64_t> ids;
  std::set<uint32_t> levels;
  pod_of_cgroup_.clear();
  for (const PodCgroup& pc : ScanPodCgroups(v2.root)) {
    auto it = training.find(pc.uid);
    if (it == training.end()) continue;
    PodTarget target;
    PodTargetFrom(v2.root, v2.root_level, *it->second, pc, &target);
    for (uint64_t id : target.cgroup_ids) pod_of_cgroup_[id] = pc.uid;
    ids.insert(ids.end(), target.cgroup_ids.begin(), target.cgroup_ids.end());
    levels.insert(target.pod_levels.begin(), target.pod_levels.end());
  }
  const std::vector<uint32_t> level_list(levels.begin(), levels.end());
  if (bpf_off_) {
    if (Status s = bpf_off_->ReplaceTargets(ids, level_list); !s.ok()) {
      return s;
    }
  }
  return bpf_->ReplaceTargets(ids, level_list);
}

std::string ContinuousProfiler::LeafFunction(const RawStackCount& raw) {
  if (!raw.user_stack.empty()) {
    return symbolizer_.SymbolizeUser(raw.tgid, {raw.user_stack.front()})
        .front()
        .function;
  }
  if (!raw.kernel_stack.empty()) {
    return symbolizer_.SymbolizeKernel({raw.kernel_stack.front()})
        .front()
        .function;
  }
  return "[no stack]";
}

Status ContinuousProfiler::Update(const PodList& pods) {
  if (!bpf_) {
    Status error = Status::Ok();
    // Drained (and cleared) every cycle: a few thousand distinct stacks
    // at 19 Hz; a smaller stack map keeps the kernel memory charged to the
    // agent's cgroup at about 4 MiB instead of 17.
    bpf_ = ProfilerBpf::Attach({.kind = ProfileKind::kCpu,
                                .hz = options_.hz,
                                .stack_entries = 4096,
                                .count_entries = 4096},
                               &error);
    if (!bpf_) return Status::Error("continuous profiling: " + error.message());
  }
  if (options_.offcpu && !bpf_off_) {
    Status error = Status::Ok();
    bpf_off_ = ProfilerBpf::Attach({.kind = ProfileKind::kOffCpu,
                                    .stack_entries = 4096,
                                    .count_entries = 4096},
                                   &error);
    if (!bpf_off_) {
      return Status::Error("continuous off-CPU profiling: " + error.message());
    }
    targeted_uids_.clear();  // target it below
  }
  std::set<std::string> uids;
  for (const PodInfo& pod : pods) {
    if (pod.role != Role::kUnknown) uids.insert(pod.uid);
  }
  if (uids != targeted_uids_ || unknown_cgroup_seen_ ||
      ++cycles_since_retarget_ >= kRetargetEvery) {
    if (Status s = Retarget(pods); !s.ok()) {
      return Status::Error("continuous profiling: " + s.message());
    }
    targeted_uids_ = std::move(uids);
    unknown_cgroup_seen_ = false;
    cycles_since_retarget_ = 0;
  }
  const auto now = Clock::now();
  std::map<std::string, std::map<std::string, int64_t>> drain, waits;
  if (Status s = DrainInto(*bpf_, false, now, &drain); !s.ok()) return s;
  if (bpf_off_) {
    if (Status s = DrainInto(*bpf_off_, true, now, &waits); !s.ok()) return s;
  }
  ForgetProcesses(now);
  std::lock_guard lock(mu_);
  window_.Add(now, drain);
  if (bpf_off_) waits_.Add(now, waits);
  return Status::Ok();
}

void ContinuousProfiler::ForgetProcesses(Clock::time_point now) {
  for (auto it = captured_.begin(); it != captured_.end();) {
    const bool pod_left = !targeted_uids_.count(it->second.pod_uid);
    if (pod_left || now - it->second.at > kForget) {
      symbolizer_.ForgetMaps(it->first);
      it = captured_.erase(it);
    } else {
      ++it;
    }
  }
}

Status ContinuousProfiler::DrainInto(
    ProfilerBpf& bpf, bool offcpu, Clock::time_point now,
    std::map<std::string, std::map<std::string, int64_t>>* out) {
  std::vector<RawStackCount> raws;
  if (Status s = bpf.DrainAndReset(&raws); !s.ok()) return s;
  for (const RawStackCount& raw : raws) {
    auto pod = pod_of_cgroup_.find(raw.cgroup_id);
    if (pod == pod_of_cgroup_.end()) {
      // A container created since the last walk, or a pod just gone.
      unknown_cgroup_seen_ = true;
      continue;
    }
    auto seen = captured_.find(raw.tgid);
    if (seen == captured_.end() || now - seen->second.at > kRecapture) {
      symbolizer_.CaptureMaps(raw.tgid);
      captured_[raw.tgid] = {now, pod->second};
    }
    std::string site = LeafFunction(raw);
    if (offcpu) {
      site =
          (raw.kind == PROFILER_OFF_CPU_RUNNABLE ? "runnable " : "blocked ") +
          site;
    }
    (*out)[pod->second][site] += static_cast<int64_t>(raw.value);
  }
  return Status::Ok();
}

TopFunctionWindow::Top ContinuousProfiler::TopWaitsOf(
    const std::string& pod_uid, size_t n) {
  std::lock_guard lock(mu_);
  return waits_.TopOf(pod_uid, n, Clock::now());
}

TopFunctionWindow::Top ContinuousProfiler::TopOf(const std::string& pod_uid,
                                                 size_t n) {
  std::lock_guard lock(mu_);
  return window_.TopOf(pod_uid, n, Clock::now());
}

}  // namespace trainscope::profiler
