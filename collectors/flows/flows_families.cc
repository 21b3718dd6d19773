#include "flows/flows_families.h"

#include <optional>
#include <string>

#include "flows/flows_sample.h"
#include "trainscope/metric_names.h"

namespace trainscope {
namespace {

using prometheus::MetricType;

std::optional<double> Opt(const std::optional<uint64_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

// The peer series' labels: the local pod's identity plus the peer's. An
// unknown peer has empty peer_* labels (one series per pod and direction).
LabelMap PeerLabels(const PodInfo& pod, const PeerTrafficSample& s) {
  return {{"namespace", pod.namespace_name},
          {"pod", pod.name},
          {"training_job", pod.training_job},
          {"role", std::string(RoleName(pod.role))},
          {"peer_namespace", s.peer_namespace},
          {"peer_pod", s.peer_pod},
          {"peer_role", std::string(RoleName(s.peer_role))}};
}

// Time in exchange bursts with each peer: rate() is the fraction of the time
// the pod spends receiving from / sending to that peer, what a bottleneck
// costs the step (docs/diagnosis.md, "Cost").
struct FlowsExchangeFamilies {
  FamilyBuilder receive{
      std::string(kPeerReceiveExchangeSecondsTotal),
      "Seconds the pod spent receiving exchange bursts from the peer pod "
      "(first to last payload packet of each burst; a silence over "
      "--step-burst-gap ends a burst).",
      MetricType::Counter};
  FamilyBuilder transmit{
      std::string(kPeerTransmitExchangeSecondsTotal),
      "Seconds the pod spent sending exchange bursts to the peer pod.",
      MetricType::Counter};
  FamilyBuilder wait{
      std::string(kPeerWaitSecondsTotal),
      "Seconds the pod waited on the peer pod's answers: from the first "
      "byte of each request it sent the peer to the last byte of the "
      "answer, silences included (once however many connections waited).",
      MetricType::Counter};
};

void AppendPeerFamilies(const ExportContext& ctx,
                        std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder rx(
      std::string(kPeerReceiveBytesTotal),
      "Bytes the pod received from the peer pod (IP level: IP "
      "header and everything after it), whoever opened the "
      "connection. Peers that are no known pod share peer_pod=\"\".",
      MetricType::Counter);
  FamilyBuilder tx(std::string(kPeerTransmitBytesTotal),
                   "Bytes the pod sent to the peer pod (IP level), whoever "
                   "opened the connection. Peers that are no known pod share "
                   "peer_pod=\"\".",
                   MetricType::Counter);
  FamilyBuilder rx_pkts("trainscope_peer_receive_packets_total",
                        "Packets the pod received from the peer pod (a "
                        "GRO/GSO aggregate counts once).",
                        MetricType::Counter);
  FamilyBuilder tx_pkts("trainscope_peer_transmit_packets_total",
                        "Packets the pod sent to the peer pod (a GSO "
                        "aggregate counts once).",
                        MetricType::Counter);
  FamilyBuilder rx_payload(
      "trainscope_peer_receive_payload_bytes_total",
      "Transport payload bytes the pod received from the peer pod (IP and "
      "TCP/UDP headers excluded: what applications such as iperf3 count).",
      MetricType::Counter);
  FamilyBuilder tx_payload(
      "trainscope_peer_transmit_payload_bytes_total",
      "Transport payload bytes the pod sent to the peer pod (headers "
      "excluded).",
      MetricType::Counter);
  FlowsExchangeFamilies exchange;
  for (const auto& s : ctx.snapshot().peer_traffic) {
    const PodInfo* pod = ctx.FindPod(s.pod_uid);
    if (!pod) continue;
    LabelMap labels = PeerLabels(*pod, s);
    rx.Add(labels, static_cast<double>(s.receive_bytes));
    tx.Add(labels, static_cast<double>(s.transmit_bytes));
    rx_pkts.Add(labels, static_cast<double>(s.receive_packets));
    tx_pkts.Add(labels, static_cast<double>(s.transmit_packets));
    if (s.receive_payload_bytes)
      rx_payload.Add(labels, Opt(s.receive_payload_bytes));
    if (s.transmit_payload_bytes)
      tx_payload.Add(labels, Opt(s.transmit_payload_bytes));
    if (s.receive_exchange_seconds)
      exchange.receive.Add(labels, *s.receive_exchange_seconds);
    if (s.transmit_exchange_seconds)
      exchange.transmit.Add(labels, *s.transmit_exchange_seconds);
    if (s.wait_seconds) exchange.wait.Add(labels, *s.wait_seconds);
  }
  for (auto* f : {&rx, &tx, &rx_pkts, &tx_pkts, &rx_payload, &tx_payload,
                  &exchange.receive, &exchange.transmit, &exchange.wait}) {
    f->MoveInto(out);
  }
}

void AppendStepRateFamilies(const ExportContext& ctx,
                            std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder steps(
      std::string(kWorkerStepsPerSecond),
      "Training steps per second of the worker, measured without "
      "instrumentation: the period at which its exchange bursts with its "
      "peers repeat (one pull and one push per PS, one ring pass per "
      "allreduce, per step). Absent while its traffic shows no clear period.",
      MetricType::Gauge);
  for (const auto& r : ctx.snapshot().step_rates) {
    if (!r.steps_per_second) continue;
    const PodInfo* pod = ctx.FindPod(r.pod_uid);
    if (!pod || !RunsTrainingSteps(pod->role)) continue;
    steps.Add({{"namespace", pod->namespace_name},
               {"pod", pod->name},
               {"training_job", pod->training_job}},
              *r.steps_per_second);
  }
  steps.MoveInto(out);
}

void AppendHealthFamilies(const FlowsSample& r,
                          std::vector<prometheus::MetricFamily>& out) {
  struct Metric {
    const char* name;
    const char* help;
    MetricType type;
    std::optional<double> value;
  };
  const Metric metrics[] = {
      {"trainscope_flows_map_entries",
       "Entries in the in-kernel flow map at the last drain.",
       MetricType::Gauge, Opt(r.map_entries)},
      {"trainscope_flows_map_max_entries",
       "Capacity of the in-kernel flow map (--flow-map-entries).",
       MetricType::Gauge, Opt(r.map_max_entries)},
      {"trainscope_flows_map_evictions_total",
       "Flow map entries evicted by the LRU to make room; bytes counted on "
       "an evicted entry since the previous drain are lost. Raise "
       "--flow-map-entries when this grows.",
       MetricType::Counter, Opt(r.map_evictions_total)},
      {"trainscope_flows_map_insert_failures_total",
       "Packets the BPF program could not count because no map entry could "
       "be created.",
       MetricType::Counter, Opt(r.map_insert_failures_total)},
      {"trainscope_flows_pcap_kernel_drops_total",
       "Packets libpcap's kernel ring dropped because user space fell behind "
       "(pcap_stats ps_drop); raise --pcap-buffer-bytes.",
       MetricType::Counter, Opt(r.pcap_kernel_drops_total)},
      {"trainscope_flows_pcap_interface_drops_total",
       "Packets dropped by the captured interfaces (pcap_stats ps_ifdrop).",
       MetricType::Counter, Opt(r.pcap_interface_drops_total)},
      {"trainscope_flows_burst_events_lost_total",
       "Exchange bursts the BPF program could not hand to user space "
       "(ring buffer full); step rates may read low while this grows.",
       MetricType::Counter, Opt(r.burst_events_lost_total)},
      {"trainscope_flows_unattributed_bytes_total",
       "Bytes counted for a pod cgroup or address the pod table does not "
       "(yet) know; not in any peer series.",
       MetricType::Counter, static_cast<double>(r.unattributed_bytes_total)},
  };
  for (const auto& m : metrics) {
    FamilyBuilder f(m.name, m.help, m.type);
    f.Add({}, m.value);
    f.MoveInto(out);
  }
  FamilyBuilder mode("trainscope_flows_mode",
                     "1 for the source the flows collector uses: ebpf, or "
                     "pcap (chosen or fallen back to).",
                     MetricType::Gauge);
  if (!r.mode.empty()) mode.Add({{"mode", r.mode}}, 1.0);
  mode.MoveInto(out);
}

}  // namespace

void AppendFlowsFamilies(const ExportContext& ctx,
                         std::vector<prometheus::MetricFamily>& out) {
  AppendPeerFamilies(ctx, out);
  AppendStepRateFamilies(ctx, out);
  if (const auto* health = ctx.snapshot().parts.Get<FlowsSample>()) {
    AppendHealthFamilies(*health, out);
  }
}

}  // namespace trainscope
