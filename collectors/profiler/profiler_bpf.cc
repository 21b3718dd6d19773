#include "profiler/profiler_bpf.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/perf_event.h>
#include <spdlog/spdlog.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <set>

#include "bpf_common/libbpf_support.h"
#include "profiler.h"
#include "profiler.skel.h"

namespace trainscope::profiler {
namespace {

// What this collector's BPF operations need (bpf::ErrnoText).
std::string ErrnoText(int err) {
  return bpf::ErrnoText(
      err,
      "CAP_BPF+CAP_PERFMON or CAP_SYS_ADMIN; kernel.perf_event_paranoid limits "
      "unprivileged perf events");
}

int PerfEventOpen(perf_event_attr* attr, int cpu) {
  return static_cast<int>(
      ::syscall(__NR_perf_event_open, attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC));
}

}  // namespace

void ProfilerBpf::SkelDeleter::operator()(::profiler* skel) const {
  profiler__destroy(skel);
}

void ProfilerBpf::LinkDeleter::operator()(bpf_link* link) const {
  bpf_link__destroy(link);
}

ProfilerBpf::~ProfilerBpf() {
  links_.clear();
  skel_.reset();
}

std::unique_ptr<ProfilerBpf> ProfilerBpf::Attach(
    const BpfProfileOptions& options, Status* error) {
  libbpf_set_print(bpf::LibbpfPrint);
  std::unique_ptr<ProfilerBpf> self(new ProfilerBpf());
  self->kind_ = options.kind;
  self->skel_.reset(profiler__open());
  if (!self->skel_) {
    *error = Status::Error("opening the profiler BPF object failed: " +
                           ErrnoText(errno));
    return nullptr;
  }
  auto* skel = self->skel_.get();
  const bool cpu = options.kind == ProfileKind::kCpu;
  // Only the program this kind needs is loaded: a CPU profile must not
  // depend on tp_btf, nor an off-CPU one on perf events.
  bpf_program__set_autoload(skel->progs.on_cpu_sample, cpu);
  bpf_program__set_autoload(skel->progs.on_sched_switch, !cpu);
  if (int err =
          bpf_map__set_max_entries(skel->maps.stacks, options.stack_entries)) {
    *error = Status::Error("sizing the stack map failed: " + ErrnoText(err));
    return nullptr;
  }
  if (int err =
          bpf_map__set_max_entries(skel->maps.counts, options.count_entries)) {
    *error = Status::Error("sizing the count map failed: " + ErrnoText(err));
    return nullptr;
  }
  // A CPU profile never uses the off-CPU start map: keep it tiny (its
  // memory is charged to the agent's cgroup like any map's).
  if (cpu) bpf_map__set_max_entries(skel->maps.offcpu_start, 64);
  if (int err = profiler__load(skel)) {
    *error = Status::Error("loading the profiler BPF program failed: " +
                           ErrnoText(err));
    return nullptr;
  }
  if (cpu) {
    if (Status s = self->AttachPerfEvents(options.hz); !s.ok()) {
      *error = s;
      return nullptr;
    }
  } else {
    bpf_link* link = bpf_program__attach(skel->progs.on_sched_switch);
    if (!link) {
      *error = Status::Error("attaching tp_btf/sched_switch failed: " +
                             ErrnoText(errno));
      return nullptr;
    }
    self->links_.emplace_back(link);
  }
  return self;
}

Status ProfilerBpf::AttachPerfEvents(int hz) {
  const int cpus = libbpf_num_possible_cpus();
  if (cpus <= 0) {
    return Status::Error("cannot count possible CPUs: " + ErrnoText(cpus));
  }
  std::string last_error;
  for (int cpu = 0; cpu < cpus; ++cpu) {
    perf_event_attr attr{};
    attr.size = sizeof attr;
    attr.type = PERF_TYPE_SOFTWARE;
    attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attr.freq = 1;
    attr.sample_freq = static_cast<uint64_t>(hz);
    UniqueFd fd(PerfEventOpen(&attr, cpu));
    if (!fd.valid()) {
      // An offline CPU (ENODEV) has nothing to sample; anything else is a
      // real failure, reported if no CPU at all could be sampled.
      if (errno != ENODEV) {
        last_error = "perf_event_open(cpu-clock, cpu " + std::to_string(cpu) +
                     ") failed: " + ErrnoText(errno);
      }
      continue;
    }
    bpf_link* link =
        bpf_program__attach_perf_event(skel_->progs.on_cpu_sample, fd.get());
    if (!link) {
      return Status::Error("attaching the profiler to the perf event of cpu " +
                           std::to_string(cpu) +
                           " failed: " + ErrnoText(errno));
    }
    // The link owns the perf event fd from here on (libbpf closes it).
    links_.emplace_back(link);
    (void)fd.release();
  }
  if (links_.empty()) {
    return Status::Error(last_error.empty() ? "no online CPU to sample"
                                            : last_error);
  }
  return Status::Ok();
}

Status ProfilerBpf::SetTargets(const std::vector<uint64_t>& cgroup_ids,
                               const std::vector<uint32_t>& pod_levels) {
  const int fd = bpf_map__fd(skel_->maps.targets);
  for (uint64_t id : cgroup_ids) {
    uint8_t one = 1;
    if (bpf_map_update_elem(fd, &id, &one, BPF_ANY) != 0) {
      return Status::Error(
          "adding cgroup " + std::to_string(id) +
          " to the profiler's targets failed: " + ErrnoText(errno));
    }
  }
  size_t i = 0;
  for (uint32_t level : pod_levels) {
    if (i == PROFILER_MAX_POD_LEVELS || level == 0) continue;
    skel_->bss->target_levels[i++] = level;
  }
  return Status::Ok();
}

Status ProfilerBpf::ReplaceTargets(const std::vector<uint64_t>& cgroup_ids,
                                   const std::vector<uint32_t>& pod_levels) {
  if (Status s = SetTargets(cgroup_ids, pod_levels); !s.ok()) return s;
  const int fd = bpf_map__fd(skel_->maps.targets);
  for (uint64_t old : targets_) {
    if (std::find(cgroup_ids.begin(), cgroup_ids.end(), old) ==
        cgroup_ids.end()) {
      bpf_map_delete_elem(fd, &old);
    }
  }
  targets_ = cgroup_ids;
  size_t i = 0;
  for (uint32_t level : pod_levels) {
    if (i < PROFILER_MAX_POD_LEVELS && level != 0) i++;
  }
  for (; i < PROFILER_MAX_POD_LEVELS; ++i) skel_->bss->target_levels[i] = 0;
  return Status::Ok();
}

Status ProfilerBpf::DrainAndReset(std::vector<RawStackCount>* out) {
  const int counts = bpf_map__fd(skel_->maps.counts);
  const int stacks = bpf_map__fd(skel_->maps.stacks);
  std::vector<profiler_key> keys;
  profiler_key key{}, next{};
  const profiler_key* prev = nullptr;
  const uint64_t limit = bpf_map__max_entries(skel_->maps.counts) * 2ull;
  for (uint64_t n = 0; n < limit; ++n) {
    if (bpf_map_get_next_key(counts, prev, &next) != 0) break;
    keys.push_back(next);
    key = next;
    prev = &key;
  }
  std::set<int> stack_ids;
  for (const profiler_key& k : keys) {
    profiler_value value{};
    if (bpf_map_lookup_elem(counts, &k, &value) != 0) continue;
    bpf_map_delete_elem(counts, &k);
    RawStackCount raw;
    raw.tgid = k.tgid;
    raw.pid = k.pid;
    raw.cgroup_id = k.cgroup_id;
    raw.kind = static_cast<int>(k.kind);
    raw.comm.assign(value.comm, strnlen(value.comm, PROFILER_COMM_LEN));
    raw.user_stack = ReadStack(k.user_stack);
    raw.kernel_stack = ReadStack(k.kernel_stack);
    raw.value = value.value;
    raw.events = value.events;
    out->push_back(std::move(raw));
    if (k.user_stack >= 0) stack_ids.insert(k.user_stack);
    if (k.kernel_stack >= 0) stack_ids.insert(k.kernel_stack);
  }
  for (int id : stack_ids) {
    const uint32_t sid = static_cast<uint32_t>(id);
    bpf_map_delete_elem(stacks, &sid);
  }
  return Status::Ok();
}

std::vector<uint64_t> ProfilerBpf::ReadStack(int id) const {
  std::vector<uint64_t> frames;
  if (id < 0) return frames;
  uint64_t ips[PROFILER_MAX_STACK_DEPTH] = {};
  const uint32_t key = static_cast<uint32_t>(id);
  if (bpf_map_lookup_elem(bpf_map__fd(skel_->maps.stacks), &key, ips) != 0) {
    return frames;
  }
  for (uint64_t ip : ips) {
    if (ip == 0) break;
    frames.push_back(ip);
  }
  return frames;
}

Status ProfilerBpf::Drain(uint64_t now_ns, std::vector<RawStackCount>* out) {
  auto to_raw = [this](const profiler_key& key, const char* comm) {
    RawStackCount raw;
    raw.tgid = key.tgid;
    raw.pid = key.pid;
    raw.cgroup_id = key.cgroup_id;
    raw.kind = static_cast<int>(key.kind);
    raw.comm.assign(comm, strnlen(comm, PROFILER_COMM_LEN));
    raw.user_stack = ReadStack(key.user_stack);
    raw.kernel_stack = ReadStack(key.kernel_stack);
    raw.user_stack_lost =
        key.user_stack == -EEXIST || key.user_stack == -ENOMEM;
    return raw;
  };
  const int counts = bpf_map__fd(skel_->maps.counts);
  profiler_key key{}, next{};
  const profiler_key* prev = nullptr;
  const uint64_t limit = bpf_map__max_entries(skel_->maps.counts) * 2ull;
  for (uint64_t n = 0; n < limit; ++n) {
    if (bpf_map_get_next_key(counts, prev, &next) != 0) break;
    profiler_value value{};
    if (bpf_map_lookup_elem(counts, &next, &value) == 0) {
      RawStackCount raw = to_raw(next, value.comm);
      raw.value = value.value;
      raw.events = value.events;
      out->push_back(std::move(raw));
    }
    key = next;
    prev = &key;
  }
  if (kind_ != ProfileKind::kOffCpu) return Status::Ok();
  // Threads off CPU right now (asleep for the whole profile, say) have no
  // switch-in yet: count them up to now.
  const int starts = bpf_map__fd(skel_->maps.offcpu_start);
  uint32_t pid = 0, next_pid = 0;
  const uint32_t* prev_pid = nullptr;
  for (uint64_t n = 0; n < limit; ++n) {
    if (bpf_map_get_next_key(starts, prev_pid, &next_pid) != 0) break;
    profiler_offcpu_start start{};
    if (bpf_map_lookup_elem(starts, &next_pid, &start) == 0 &&
        now_ns > start.start_ns) {
      RawStackCount raw = to_raw(start.key, start.comm);
      raw.value = now_ns - start.start_ns;
      raw.events = 1;
      out->push_back(std::move(raw));
    }
    pid = next_pid;
    prev_pid = &pid;
  }
  return Status::Ok();
}

uint64_t ProfilerBpf::dropped() const {
  return __atomic_load_n(&skel_->bss->dropped, __ATOMIC_RELAXED);
}

Status ProbeProfiling() {
  Status error = Status::Ok();
  auto probe = ProfilerBpf::Attach({.kind = ProfileKind::kCpu,
                                    .hz = 1,
                                    .stack_entries = 16,
                                    .count_entries = 16},
                                   &error);
  return probe ? Status::Ok() : error;
}

}  // namespace trainscope::profiler
