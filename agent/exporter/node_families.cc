#include "exporter/node_families.h"

#include <chrono>
#include <optional>

namespace trainscope {
namespace {

using prometheus::MetricType;

}  // namespace

void AppendNodeFamilies(const ExportContext& ctx,
                        std::vector<prometheus::MetricFamily>& out) {
  const NodeSample& node = ctx.snapshot().node;
  const LabelMap labels = {{"node", ctx.node()}};
  FamilyBuilder("trainscope_node_cpu_usage_seconds_total",
                "CPU time spent busy (all modes but idle and iowait) summed "
                "over all CPUs, in seconds.",
                MetricType::Counter)
      .Add(labels, node.cpu_seconds_total)
      .MoveInto(out);
  FamilyBuilder("trainscope_node_cpu_idle_seconds_total",
                "CPU time spent idle or waiting for IO summed over all CPUs, "
                "in seconds.",
                MetricType::Counter)
      .Add(labels, node.cpu_idle_seconds_total)
      .MoveInto(out);
  const std::optional<double> cpus =
      node.cpu_count ? std::optional<double>(*node.cpu_count) : std::nullopt;
  FamilyBuilder("trainscope_node_cpus", "Online CPUs of the node.",
                MetricType::Gauge)
      .Add(labels, cpus)
      .MoveInto(out);
  // The old name ends in _count, which promtool reserves for histograms and
  // summaries. Kept one release for dashboards and rules that read it;
  // removal planned in docs/metrics.md.
  FamilyBuilder("trainscope_node_cpu_count",
                "Deprecated: use trainscope_node_cpus (same value); removed "
                "in the next release.",
                MetricType::Gauge)
      .Add(labels, cpus)
      .MoveInto(out);
  FamilyBuilder("trainscope_node_memory_total_bytes",
                "Physical memory of the node, in bytes.", MetricType::Gauge)
      .Add(labels, AsDouble(node.memory_total_bytes))
      .MoveInto(out);
  FamilyBuilder("trainscope_node_memory_available_bytes",
                "Memory available for new work without swapping "
                "(MemAvailable), in bytes.",
                MetricType::Gauge)
      .Add(labels, AsDouble(node.memory_available_bytes))
      .MoveInto(out);

  FamilyBuilder rx("trainscope_node_network_receive_bytes_total",
                   "Bytes received on a physical NIC.", MetricType::Counter);
  FamilyBuilder tx("trainscope_node_network_transmit_bytes_total",
                   "Bytes sent on a physical NIC.", MetricType::Counter);
  FamilyBuilder rx_drops("trainscope_node_network_receive_drops_total",
                         "Received packets dropped on a physical NIC.",
                         MetricType::Counter);
  FamilyBuilder tx_drops("trainscope_node_network_transmit_drops_total",
                         "Outgoing packets dropped on a physical NIC.",
                         MetricType::Counter);
  FamilyBuilder speed("trainscope_node_network_speed_bytes",
                      "Link speed of a physical NIC in bytes per second "
                      "(absent when the driver does not report one).",
                      MetricType::Gauge);
  for (const auto& nic : node.nics) {
    auto nic_labels = WithLabels(labels, {{"device", nic.device}});
    rx.Add(nic_labels, static_cast<double>(nic.counters.receive_bytes));
    tx.Add(nic_labels, static_cast<double>(nic.counters.transmit_bytes));
    rx_drops.Add(nic_labels, static_cast<double>(nic.counters.receive_drops));
    tx_drops.Add(nic_labels, static_cast<double>(nic.counters.transmit_drops));
    speed.Add(nic_labels, nic.speed_bytes_per_second);
  }
  for (auto* family : {&rx, &tx, &rx_drops, &tx_drops, &speed}) {
    family->MoveInto(out);
  }
}

void AppendCollectorFamilies(const ExportContext& ctx,
                             std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder up("trainscope_collector_up",
                   "1 when the collector's last run succeeded, 0 when it "
                   "failed or had nothing to collect (no GPU, no BPF).",
                   MetricType::Gauge);
  FamilyBuilder duration("trainscope_collector_duration_seconds",
                         "Wall time of the collector's last run, in seconds.",
                         MetricType::Gauge);
  for (const auto& run : ctx.snapshot().collectors) {
    LabelMap labels = {{"collector", run.name}};
    up.Add(labels, run.status.ok() ? 1.0 : 0.0);
    duration.Add(labels, run.duration_seconds);
  }
  up.MoveInto(out);
  duration.MoveInto(out);
  FamilyBuilder("trainscope_last_sample_timestamp_seconds",
                "Unix time of the snapshot this exposition renders.",
                MetricType::Gauge)
      .Add({}, std::chrono::duration<double>(
                   ctx.snapshot().taken_at.time_since_epoch())
                   .count())
      .MoveInto(out);
}

}  // namespace trainscope
