#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "bpf_common/cgroup2.h"
#include "flows/bpf_loader.h"
#include "flows/exchange_wait.h"
#include "flows/flow_map.h"
#include "flows/flows_options.h"
#include "flows/flows_sample.h"
#include "flows/pcap_capture.h"
#include "flows/peers.h"
#include "flows/step_rates.h"
#include "trainscope/collector.h"
#include "trainscope/log_limiter.h"

namespace trainscope {

// Per-pod, per-peer traffic. eBPF counts in the kernel per pod cgroup; when
// it cannot attach (no cgroup v2, no privileges) it falls back to libpcap,
// once, saying why. Collect never throws. Everything it knows goes into the
// snapshot: Snapshot::peer_traffic, Snapshot::step_rates and its own
// FlowsSample part.
class FlowsCollector : public Collector {
 public:
  FlowsCollector(FlowsOptions options, HostPaths host);
  std::string_view name() const override { return "flows"; }
  CollectStatus Collect(const CollectContext& ctx, Snapshot& out) override;

  // For tests: the active source (kEbpf or kPcap; empty before the first
  // successful setup).
  std::optional<FlowsMode> active_mode() const { return active_; }

 private:
  Status EnsureSource();
  Status OpenPcap();
  // The pod cgroups' IDs (inode numbers) by which the programs tell pods
  // apart. A walk of the cgroup tree cost as much as the drain at 110
  // pods, so the last one is kept while it holds exactly this node's pods
  // (`local`), and redone at least every kIdRescanEveryCycles cycles.
  const std::map<uint64_t, PodCgroupId>& PodCgroupIds(
      const std::set<std::string>& local);
  Status DrainBpf(const std::set<std::string>& local,
                  std::vector<FlowDelta>* deltas,
                  std::map<uint64_t, std::string>* cgroup_to_uid,
                  FlowsSample* sample);
  // Exchange bursts finished since the last cycle, and the source clock's
  // now (monotonic for eBPF, epoch for pcap).
  std::vector<BurstEvent> TakeBursts(double* now_s);
  // Exchange bursts into step rates (Snapshot::step_rates).
  void UpdateStepRates(const std::vector<BurstEvent>& bursts,
                       const PeerResolver& resolver, const PodList& pods,
                       const PodList* peer_pods, double now_s, Snapshot& out);

  const FlowsOptions options_;
  const HostPaths host_;
  std::optional<FlowsMode> active_;
  std::string bpf_failure_;
  Cgroup2Target target_;
  static constexpr int kIdRescanEveryCycles = 12;
  std::map<uint64_t, PodCgroupId> pod_cgroup_ids_;
  int cycles_since_id_scan_ = 0;
  std::unique_ptr<PeerFlowsBpf> bpf_;
  std::unique_ptr<PcapCapture> pcap_;
  CounterTracker tracker_;
  PeerLedger ledger_;
  StepRateTracker step_rates_;
  // Requests to answers: the time each pod waits on its peers.
  ExchangeWaits waits_;
  LogLimiter log_limiter_;
};

}  // namespace trainscope
