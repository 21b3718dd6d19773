#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "flows/burst.h"
#include "flows/flow_record.h"
#include "trainscope/status.h"
#include "trainscope/unique_fd.h"

struct peer_flows;
struct bpf_link;
struct ring_buffer;

namespace trainscope {

// Thin RAII owner of the peer_flows skeleton and its two cgroup links.
// Nothing is pinned: the links live as long as this process holds their
// fds, so the programs detach when the agent exits, even on SIGKILL.
class PeerFlowsBpf {
 public:
  struct Stats {
    uint64_t entries = 0;            // live map entries at the last drain
    uint64_t capacity = 0;           // max_entries
    uint64_t inserts = 0;            // entries ever created by the program
    uint64_t deleted = 0;            // entries of departed pods deleted here
    uint64_t insert_failures = 0;    // packets not counted: no entry
    uint64_t burst_events_lost = 0;  // ring buffer full
  };

  // Loads and attaches to `cgroup_dir` (cgroup v2). Errors say which step
  // failed and errno's text (EPERM: missing CAP_BPF/CAP_SYS_ADMIN).
  // `burst_gap_ns` 0 turns exchange-burst tracking off.
  static std::unique_ptr<PeerFlowsBpf> Attach(
      const std::filesystem::path& cgroup_dir, uint32_t map_entries,
      uint64_t burst_gap_ns, Status* error);
  ~PeerFlowsBpf();
  PeerFlowsBpf(const PeerFlowsBpf&) = delete;
  PeerFlowsBpf& operator=(const PeerFlowsBpf&) = delete;

  // Replaces the pod cgroups the program counts: id -> depth below root.
  Status SetPods(const std::map<uint64_t, uint32_t>& pod_levels);
  // Reads every map entry (batch lookup, else key iteration), summing the
  // per-CPU values: cumulative counters.
  Status Drain(std::map<FlowKey, FlowCounters>* out);
  // Deletes the flow and burst entries of the pod cgroups SetPods dropped
  // since the last call. Call it after the Drain that read their last
  // counters: the program no longer counts them, and without this their
  // entries would wait for the LRU to evict them, read at every drain.
  void ForgetDepartedPods();
  // Exchange bursts finished since the last call (times on CLOCK_MONOTONIC).
  Status DrainBursts(std::vector<BurstEvent>* out);
  Stats stats() const;
  bool used_batch() const { return batch_ok_; }

 private:
  PeerFlowsBpf() = default;
  // Opens and loads the skeleton; reading headers in place needs
  // CAP_PERFMON (direct packet access in cgroup_skb).
  Status Load(uint32_t map_entries, uint64_t burst_gap_ns,
              bool headers_in_place);
  Status DrainBatch(std::map<FlowKey, FlowCounters>* out);
  Status DrainIterate(std::map<FlowKey, FlowCounters>* out);

  struct SkelDeleter {
    void operator()(peer_flows* skel) const;
  };
  struct LinkDeleter {
    void operator()(bpf_link* link) const;
  };
  struct RingDeleter {
    void operator()(ring_buffer* ring) const;
  };
  static int OnBurst(void* self, void* data, size_t size);
  std::unique_ptr<peer_flows, SkelDeleter> skel_;
  UniqueFd cgroup_fd_;
  // Declared after skel_, so destroyed before it (the destructor also resets
  // them first): links detach before the programs are unloaded.
  std::unique_ptr<bpf_link, LinkDeleter> ingress_;
  std::unique_ptr<bpf_link, LinkDeleter> egress_;
  std::unique_ptr<ring_buffer, RingDeleter> bursts_;
  std::vector<BurstEvent>* burst_sink_ = nullptr;  // during DrainBursts
  std::map<uint64_t, uint32_t> pods_;
  std::set<uint64_t> departed_;  // dropped by SetPods, entries not yet deleted
  uint64_t deleted_ = 0;
  size_t cpus_ = 1;
  uint64_t entries_ = 0;
  bool batch_ok_ = true;
};

}  // namespace trainscope
