#include "node/node_families.h"

#include <optional>

#include "trainscope/metric_names.h"

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
  FamilyBuilder(std::string(kNodeCpus), "Online CPUs of the node.",
                MetricType::Gauge)
      .Add(labels, cpus)
      .MoveInto(out);
  // The old name ends in _count, which promtool reserves for histograms and
  // summaries. Kept one release for dashboards and rules that read it;
  // removal planned in docs/metrics.md.
  FamilyBuilder(std::string(kNodeCpuCountDeprecated),
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

  FamilyBuilder rx(std::string(kNodeNetworkReceiveBytesTotal),
                   "Bytes received on a physical NIC.", MetricType::Counter);
  FamilyBuilder tx(std::string(kNodeNetworkTransmitBytesTotal),
                   "Bytes sent on a physical NIC.", MetricType::Counter);
  FamilyBuilder rx_drops("trainscope_node_network_receive_drops_total",
                         "Received packets dropped on a physical NIC.",
                         MetricType::Counter);
  FamilyBuilder tx_drops("trainscope_node_network_transmit_drops_total",
                         "Outgoing packets dropped on a physical NIC.",
                         MetricType::Counter);
  FamilyBuilder speed(std::string(kNodeNetworkSpeedBytes),
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

}  // namespace trainscope
