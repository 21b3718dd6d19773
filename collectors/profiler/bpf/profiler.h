// Structs shared by profiler.bpf.c and user space. Fixed-width fields and
// explicit padding only: both sides must agree on every byte of the key.
#pragma once

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PROFILER_MAX_POD_LEVELS 4
#define PROFILER_MAX_STACK_DEPTH 127
#define PROFILER_COMM_LEN 16

enum profiler_kind {
  PROFILER_ON_CPU = 0,
  PROFILER_OFF_CPU_RUNNABLE = 1,  // preempted: runnable but waiting for a CPU
  PROFILER_OFF_CPU_BLOCKED = 2,   // slept: futex, network, IO, nanosleep
};

struct profiler_key {
  __u32 tgid;
  __u32 pid;
  __u64 cgroup_id;   // the thread's own (leaf) cgroup v2 id
  __s32 user_stack;  // stack map id, < 0 when the kernel had none (-EFAULT)
  __s32 kernel_stack;
  __u32 kind;  // enum profiler_kind
  __u32 pad;
};

struct profiler_value {
  __u64 value;   // samples (on-CPU) or nanoseconds (off-CPU)
  __u64 events;  // samples or context switches
  char comm[PROFILER_COMM_LEN];
};

// A thread of a profiled pod that is off CPU right now.
struct profiler_offcpu_start {
  __u64 start_ns;  // bpf_ktime_get_ns() at switch-out (CLOCK_MONOTONIC)
  struct profiler_key key;
  char comm[PROFILER_COMM_LEN];
};
