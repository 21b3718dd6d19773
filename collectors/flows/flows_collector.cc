#include "flows/flows_collector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <set>

namespace trainscope {

FlowsCollector::FlowsCollector(FlowsOptions options, HostPaths host)
    : options_(std::move(options)), host_(std::move(host)) {}

Status FlowsCollector::OpenPcap() {
  PcapOptions po;
  po.interfaces = options_.pcap_interfaces;
  po.ports = options_.training_ports;
  po.buffer_bytes = options_.pcap_buffer_bytes;
  Status error = Status::Ok();
  pcap_ = PcapCapture::Open(po, host_.sys, &error);
  if (!pcap_) return error;
  active_ = "pcap";
  return Status::Ok();
}

Status FlowsCollector::EnsureSource() {
  if (bpf_ || pcap_) return Status::Ok();
  if (options_.mode == "pcap") return OpenPcap();
  if (bpf_failure_.empty()) {
    Status s =
        LocateCgroup2(host_.cgroup_root, options_.cgroup2_path, &target_);
    if (s.ok()) {
      bpf_ = PeerFlowsBpf::Attach(target_.attach, options_.map_entries, &s);
    }
    if (bpf_) {
      active_ = "ebpf";
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

Status FlowsCollector::DrainBpf(std::vector<FlowDelta>* deltas,
                                std::map<uint64_t, std::string>* cgroup_to_uid,
                                FlowsSample* sample) {
  std::map<uint64_t, uint32_t> levels;
  for (const auto& [id, pod] : ScanPodCgroupIds(target_.root)) {
    (*cgroup_to_uid)[id] = pod.uid;
    levels[id] = target_.root_level + pod.level;
  }
  if (Status s = bpf_->SetPods(levels); !s.ok()) return s;
  std::map<FlowKey, FlowCounters> current;
  if (Status s = bpf_->Drain(&current); !s.ok()) return s;
  *deltas = tracker_.Update({current.begin(), current.end()});
  const auto st = bpf_->stats();
  sample->map_entries = st.entries;
  sample->map_max_entries = st.capacity;
  // The program creates entries and user space never deletes them, so
  // every entry created and no longer there was evicted by the LRU.
  sample->map_evictions_total =
      st.inserts > st.entries ? st.inserts - st.entries : 0;
  sample->map_insert_failures_total = st.insert_failures;
  return Status::Ok();
}

CollectStatus FlowsCollector::Collect(const CollectContext& ctx,
                                      Snapshot& out) {
  Status status = EnsureSource();
  if (!status.ok()) return status;
  static const PodList kNoPods;
  const PodList& pods = ctx.pods ? *ctx.pods : kNoPods;

  FlowsSample sample;
  sample.mode = active_;
  std::vector<FlowDelta> deltas;
  std::map<uint64_t, std::string> cgroup_to_uid;
  std::set<std::string> local;
  for (const auto& [uid, sample] : out.pod_samples) local.insert(uid);
  for (const auto& pod : pods) {
    if (!options_.node_name.empty() && pod.node == options_.node_name) {
      local.insert(pod.uid);
    }
  }

  if (bpf_) {
    status = DrainBpf(&deltas, &cgroup_to_uid, &sample);
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

  ledger_.Add(deltas, resolver);
  ledger_.Prune(pods, peer_pods);
  out.peer_traffic = ledger_.Samples(pods, peer_pods);
  sample.unattributed_bytes_total = ledger_.unattributed_bytes();
  out.flows = std::move(sample);
  return status;
}

}  // namespace trainscope
