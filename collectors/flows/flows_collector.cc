#include "flows/flows_collector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <set>

namespace trainscope {

namespace {

StepRateSettings StepRateSettingsFor(const FlowsOptions& options) {
  StepRateSettings s;
  s.merge_gap_s = options.burst_gap_s;
  return s;
}

}  // namespace

FlowsCollector::FlowsCollector(FlowsOptions options, HostPaths host)
    : options_(std::move(options)),
      host_(std::move(host)),
      step_rates_(StepRateSettingsFor(options_)),
      waits_(options_.training_ports) {}

Status FlowsCollector::OpenPcap() {
  PcapOptions po;
  po.interfaces = options_.pcap_interfaces;
  po.ports = options_.training_ports;
  po.buffer_bytes = options_.pcap_buffer_bytes;
  po.burst_gap_s = options_.burst_gap_s;
  Status error = Status::Ok();
  pcap_ = PcapCapture::Open(po, host_.sys, &error);
  if (!pcap_) return error;
  active_ = FlowsMode::kPcap;
  return Status::Ok();
}

Status FlowsCollector::EnsureSource() {
  if (bpf_ || pcap_) return Status::Ok();
  if (options_.mode == FlowsMode::kPcap) return OpenPcap();
  if (bpf_failure_.empty()) {
    Status s =
        LocateCgroup2(host_.cgroup_root, options_.cgroup2_path, &target_);
    if (s.ok()) {
      bpf_ = PeerFlowsBpf::Attach(
          target_.attach, options_.map_entries,
          static_cast<uint64_t>(options_.burst_gap_s * 1e9), &s);
    }
    if (bpf_) {
      active_ = FlowsMode::kEbpf;
      spdlog::info(
          "[flows] eBPF cgroup_skb programs attached to {} ({} map "
          "entries)",
          target_.attach.string(), options_.map_entries);
      return Status::Ok();
    }
    bpf_failure_ = s.message();
    spdlog::warn("[flows] eBPF unavailable: {}; falling back to libpcap",
                 bpf_failure_);
  }
  Status p = OpenPcap();
  if (!p.ok()) {
    return Status::Error("eBPF unavailable (" + bpf_failure_ +
                         ") and libpcap fallback failed (" + p.message() + ")");
  }
  return Status::Ok();
}

const std::map<uint64_t, PodCgroupId>& FlowsCollector::PodCgroupIds(
    const std::set<std::string>& local) {
  std::set<std::string> known;
  for (const auto& [id, pod] : pod_cgroup_ids_) known.insert(pod.uid);
  if (known != local || ++cycles_since_id_scan_ >= kIdRescanEveryCycles) {
    pod_cgroup_ids_ = ScanPodCgroupIds(target_.root);
    cycles_since_id_scan_ = 0;
  }
  return pod_cgroup_ids_;
}

Status FlowsCollector::DrainBpf(const std::set<std::string>& local,
                                std::vector<FlowDelta>* deltas,
                                std::map<uint64_t, std::string>* cgroup_to_uid,
                                FlowsSample* sample) {
  std::map<uint64_t, uint32_t> levels;
  for (const auto& [id, pod] : PodCgroupIds(local)) {
    (*cgroup_to_uid)[id] = pod.uid;
    levels[id] = target_.root_level + pod.level;
  }
  if (Status s = bpf_->SetPods(levels); !s.ok()) return s;
  std::map<FlowKey, FlowCounters> current;
  if (Status s = bpf_->Drain(&current); !s.ok()) return s;
  *deltas = tracker_.Update({current.begin(), current.end()});
  // Departed pods' last bytes are in `deltas` now; their entries can go.
  bpf_->ForgetDepartedPods();
  const auto st = bpf_->stats();
  sample->map_entries = st.entries;
  sample->map_max_entries = st.capacity;
  // Every entry the program created that is neither there nor deleted here
  // was evicted by the LRU.
  const uint64_t gone = st.entries + st.deleted;
  sample->map_evictions_total = st.inserts > gone ? st.inserts - gone : 0;
  sample->map_insert_failures_total = st.insert_failures;
  sample->burst_events_lost_total = st.burst_events_lost;
  return Status::Ok();
}

CollectStatus FlowsCollector::Collect(const CollectContext& ctx,
                                      Snapshot& out) {
  Status status = EnsureSource();
  if (!status.ok()) return status;
  static const PodList kNoPods;
  const PodList& pods = ctx.pods ? *ctx.pods : kNoPods;

  FlowsSample sample;
  if (active_) sample.mode = NameOfEnum(kFlowsModeNames, *active_);
  std::vector<FlowDelta> deltas;
  std::map<uint64_t, std::string> cgroup_to_uid;
  std::set<std::string> local;
  for (const auto& [uid, pod_sample] : out.pod_samples) local.insert(uid);
  for (const auto& pod : pods) {
    if (!options_.node_name.empty() && pod.node == options_.node_name) {
      local.insert(pod.uid);
    }
  }

  if (bpf_) {
    status = DrainBpf(local, &deltas, &cgroup_to_uid, &sample);
  }
  const PodList* peer_pods = ctx.peer_pods.get();
  PeerResolver resolver(pods, cgroup_to_uid, local, peer_pods);
  if (pcap_) {
    std::map<IpAddress, std::string> by_addr;
    for (const auto& [addr, pod] : resolver.local_by_address()) {
      by_addr[addr] = pod->uid;
    }
    pcap_->SetLocalPods(std::move(by_addr));
    deltas = pcap_->TakeDeltas();
    sample.pcap_kernel_drops_total = pcap_->kernel_drops();
    sample.pcap_interface_drops_total = pcap_->interface_drops();
    if (std::string failure = pcap_->failure(); !failure.empty()) {
      status = Status::Error(failure);
    }
  }

  double now_s = 0;
  const std::vector<BurstEvent> bursts = TakeBursts(&now_s);
  ledger_.Add(deltas, resolver);
  if (options_.burst_gap_s > 0) {
    ledger_.AddBursts(bursts, resolver, options_.burst_gap_s);
    ledger_.AddWaits(waits_.Add(bursts), resolver);
  }
  ledger_.Prune(pods, peer_pods);
  out.peer_traffic = ledger_.Samples(pods, peer_pods);
  UpdateStepRates(bursts, resolver, pods, peer_pods, now_s, out);
  sample.unattributed_bytes_total = ledger_.unattributed_bytes();
  out.parts.Put(std::move(sample));
  return status;
}

std::vector<BurstEvent> FlowsCollector::TakeBursts(double* now_s) {
  std::vector<BurstEvent> bursts;
  if (options_.burst_gap_s <= 0) return bursts;
  if (bpf_) {
    if (Status s = bpf_->DrainBursts(&bursts); !s.ok()) {
      if (auto line = log_limiter_.Pass("bursts", s.message()))
        spdlog::warn("[flows] {}", *line);
    } else {
      log_limiter_.Clear("bursts");
    }
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);  // bpf_ktime_get_ns's clock
    *now_s =
        static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
  } else if (pcap_) {
    bursts = pcap_->TakeBursts();
    *now_s = std::chrono::duration<double>(
                 std::chrono::system_clock::now().time_since_epoch())
                 .count();
  }
  return bursts;
}

void FlowsCollector::UpdateStepRates(const std::vector<BurstEvent>& bursts,
                                     const PeerResolver& resolver,
                                     const PodList& pods,
                                     const PodList* peer_pods, double now_s,
                                     Snapshot& out) {
  if (options_.burst_gap_s <= 0) return;
  step_rates_.Add(bursts, resolver);
  step_rates_.Prune(pods, peer_pods, now_s);
  auto rates = step_rates_.Rates(now_s);
  if (spdlog::should_log(spdlog::level::debug)) {
    spdlog::debug("[flows] {} bursts this cycle", bursts.size());
    for (const auto& line : step_rates_.Describe(now_s))
      spdlog::debug("[flows] steps {}", line);
  }
  ReconcileRanks(rates, pods, peer_pods);
  for (const auto& [uid, rate] : rates) {
    if (rate.from_job_ranks)
      spdlog::debug("[flows] steps {} takes its ranks' agreed {:.3f}/s", uid,
                    rate.steps_per_second.value_or(0));
    out.step_rates.push_back({uid, rate.steps_per_second,
                              static_cast<unsigned>(rate.streams),
                              static_cast<unsigned>(rate.streams_seen)});
  }
}

}  // namespace trainscope
