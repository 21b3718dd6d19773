#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "trainscope/status.h"
#include "trainscope/unique_fd.h"

struct profiler;
struct bpf_link;

namespace trainscope::profiler {

enum class ProfileKind { kCpu, kOffCpu };

// One aggregated stack from the kernel maps. Stacks are raw instruction
// addresses, leaf first; empty when the kernel could not walk them.
struct RawStackCount {
  uint32_t tgid = 0;
  uint32_t pid = 0;
  uint64_t cgroup_id = 0;
  int kind = 0;  // enum profiler_kind
  std::string comm;
  std::vector<uint64_t> user_stack;
  std::vector<uint64_t> kernel_stack;
  bool user_stack_lost = false;  // the stack map was full (-EEXIST/-ENOMEM)
  uint64_t value = 0;            // samples or nanoseconds
  uint64_t events = 0;
};

struct BpfProfileOptions {
  ProfileKind kind = ProfileKind::kCpu;
  int hz = 99;                     // cpu: samples per second per CPU
  uint32_t stack_entries = 16384;  // distinct stacks kept
  uint32_t count_entries = 16384;  // distinct (thread, stacks) kept
};

// RAII owner of one profiler skeleton, its perf events (one per online CPU)
// and its links. Destroying it detaches everything (links first), so a
// profile that fails half-way leaves no perf event or program behind; nothing
// is pinned, so the kernel also cleans up if the agent dies.
class ProfilerBpf {
 public:
  // Loads the program(s) for `options.kind` and attaches them. Errors say
  // which step failed and errno's text (EPERM/EACCES: the capabilities).
  static std::unique_ptr<ProfilerBpf> Attach(const BpfProfileOptions& options,
                                             Status* error);
  ~ProfilerBpf();
  ProfilerBpf(const ProfilerBpf&) = delete;
  ProfilerBpf& operator=(const ProfilerBpf&) = delete;

  // The cgroup v2 ids to record (every cgroup of the profiled pods) and the
  // depths of the pod cgroups below the v2 root (ancestor matching).
  Status SetTargets(const std::vector<uint64_t>& cgroup_ids,
                    const std::vector<uint32_t>& pod_levels);
  // Replaces the targets (continuous profiling follows the pod list):
  // adds the new ids before removing the old ones.
  Status ReplaceTargets(const std::vector<uint64_t>& cgroup_ids,
                        const std::vector<uint32_t>& pod_levels);
  // Reads every aggregate (and, off-CPU, the threads still off CPU now,
  // counted up to `now_ns` on CLOCK_MONOTONIC).
  Status Drain(uint64_t now_ns, std::vector<RawStackCount>* out);
  // Drain, then deletes what was read (counts and their stacks), so a
  // long-running profile reads deltas and its maps never fill up. Samples
  // added between the read and the delete of an entry are lost (a few per
  // drain at low rates).
  Status DrainAndReset(std::vector<RawStackCount>* out);
  uint64_t dropped() const;
  size_t perf_events() const { return links_.size(); }

 private:
  ProfilerBpf() = default;
  Status AttachPerfEvents(int hz);
  std::vector<uint64_t> ReadStack(int id) const;

  struct SkelDeleter {
    void operator()(::profiler* skel) const;
  };
  struct LinkDeleter {
    void operator()(bpf_link* link) const;
  };
  using LinkPtr = std::unique_ptr<bpf_link, LinkDeleter>;
  std::unique_ptr<::profiler, SkelDeleter> skel_;
  // Destroyed before skel_ (and reset first in the destructor): each link
  // owns its perf event fd, and links detach before the program unloads.
  std::vector<LinkPtr> links_;
  ProfileKind kind_ = ProfileKind::kCpu;
  std::vector<uint64_t> targets_;
};

// Loads and attaches a CPU profile with no targets, then tears it down: the
// cheapest honest answer to "can this agent profile?" (perf_event_paranoid,
// capabilities, BTF, kernel config all show up as the error).
Status ProbeProfiling();

}  // namespace trainscope::profiler
