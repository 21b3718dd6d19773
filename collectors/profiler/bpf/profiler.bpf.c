// CPU and off-CPU profiling of chosen pod cgroups, aggregated in the kernel.
//   on_cpu_sample: perf_event (cpu-clock, one event per CPU); counts samples
//     per (thread, user stack, kernel stack).
//   on_sched_switch: tp_btf sched_switch; the time each thread spends off
//     CPU, with its stacks at switch-out, split runnable (preempted) vs
//     blocked.
// Only threads whose cgroup v2 (or an ancestor at one of target_levels) is
// in `targets` are recorded; every other sample ends in a map lookup.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "profiler.h"
// clang-format on

char LICENSE[] SEC("license") = "GPL";

// Sizes are set by user space before load.
struct {
  __uint(type, BPF_MAP_TYPE_STACK_TRACE);
  __uint(max_entries, 16384);
  __uint(key_size, sizeof(__u32));
  __uint(value_size, PROFILER_MAX_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 16384);
  __type(key, struct profiler_key);
  __type(value, struct profiler_value);
} counts SEC(".maps");

// Cgroup v2 ids of the profiled pods (pod cgroup and every cgroup below).
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u64);
  __type(value, __u8);
} targets SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, 16384);
  __type(key, __u32);
  __type(value, struct profiler_offcpu_start);
} offcpu_start SEC(".maps");

// Depths below the v2 root at which pod cgroups sit (0 ends the list): a
// container created after the profile started still matches its pod.
__u32 target_levels[PROFILER_MAX_POD_LEVELS] = {};
// Events that found no room in `counts` (the profile under-counts).
__u64 dropped = 0;

static __always_inline __u64 current_target(void) {
  __u64 id = bpf_get_current_cgroup_id();
  if (bpf_map_lookup_elem(&targets, &id)) return id;
#pragma unroll
  for (int i = 0; i < PROFILER_MAX_POD_LEVELS; i++) {
    __u32 level = target_levels[i];
    if (level == 0) break;
    __u64 ancestor = bpf_get_current_ancestor_cgroup_id(level);
    if (ancestor && bpf_map_lookup_elem(&targets, &ancestor)) return id;
  }
  return 0;
}

static __always_inline void add(struct profiler_key *key, __u64 value,
                                const char *comm) {
  struct profiler_value *v = bpf_map_lookup_elem(&counts, key);
  if (v) {
    __sync_fetch_and_add(&v->value, value);
    __sync_fetch_and_add(&v->events, 1);
    return;
  }
  struct profiler_value init = {.value = value, .events = 1};
  __builtin_memcpy(init.comm, comm, PROFILER_COMM_LEN);
  if (bpf_map_update_elem(&counts, key, &init, BPF_NOEXIST) == 0) return;
  v = bpf_map_lookup_elem(&counts, key);  // another CPU created it first
  if (v) {
    __sync_fetch_and_add(&v->value, value);
    __sync_fetch_and_add(&v->events, 1);
  } else {
    __sync_fetch_and_add(&dropped, 1);
  }
}

SEC("perf_event")
int on_cpu_sample(struct bpf_perf_event_data *ctx) {
  __u64 cgroup = current_target();
  if (!cgroup) return 0;
  __u64 pid_tgid = bpf_get_current_pid_tgid();
  struct profiler_key key = {};
  key.tgid = pid_tgid >> 32;
  key.pid = (__u32)pid_tgid;
  key.cgroup_id = cgroup;
  key.kind = PROFILER_ON_CPU;
  key.user_stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
  key.kernel_stack = bpf_get_stackid(ctx, &stacks, 0);
  char comm[PROFILER_COMM_LEN] = {};
  bpf_get_current_comm(comm, sizeof(comm));
  add(&key, 1, comm);
  return 0;
}

// `current` is still `prev` here: the cgroup and the stacks are those of
// the thread leaving the CPU.
SEC("tp_btf/sched_switch")
int BPF_PROG(on_sched_switch, bool preempt, struct task_struct *prev,
             struct task_struct *next) {
  __u64 now = bpf_ktime_get_ns();
  __u32 prev_pid = prev->pid;
  __u64 cgroup = prev_pid ? current_target() : 0;
  if (cgroup) {
    struct profiler_offcpu_start s = {};
    s.start_ns = now;
    s.key.tgid = prev->tgid;
    s.key.pid = prev_pid;
    s.key.cgroup_id = cgroup;
    // TASK_RUNNING (0) at switch-out: preempted, still wants the CPU.
    s.key.kind = (preempt || prev->__state == 0) ? PROFILER_OFF_CPU_RUNNABLE
                                                 : PROFILER_OFF_CPU_BLOCKED;
    s.key.user_stack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
    s.key.kernel_stack = bpf_get_stackid(ctx, &stacks, 0);
    bpf_get_current_comm(s.comm, sizeof(s.comm));
    bpf_map_update_elem(&offcpu_start, &prev_pid, &s, BPF_ANY);
  }
  __u32 next_pid = next->pid;
  struct profiler_offcpu_start *start =
      bpf_map_lookup_elem(&offcpu_start, &next_pid);
  if (!start) return 0;
  struct profiler_key key = start->key;
  char comm[PROFILER_COMM_LEN];
  __builtin_memcpy(comm, start->comm, PROFILER_COMM_LEN);
  __u64 off = now > start->start_ns ? now - start->start_ns : 0;
  bpf_map_delete_elem(&offcpu_start, &next_pid);
  add(&key, off, comm);
  return 0;
}
