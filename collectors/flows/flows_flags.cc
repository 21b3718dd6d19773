#include "flows/flows_flags.h"

#include <CLI/CLI.hpp>
#include <charconv>

#include "trainscope/flag_checks.h"

namespace trainscope {
namespace {

// A burst gap under a millisecond cuts every packet into its own burst: a
// ring-buffer event per packet for nothing a step rate could use.
constexpr double kMinBurstGapSeconds = 0.001;

}  // namespace

FlowsFlags::FlowsFlags(FlowsOptions* options, const std::string* node_name)
    : options_(options),
      node_name_(node_name),
      mode_(NameOfEnum(kFlowsModeNames, options->mode)) {}

void FlowsFlags::Add(CLI::App& app) {
  app.add_option("--flows", mode_,
                 "Per-peer traffic source: ebpf (cgroup_skb; falls back to "
                 "pcap when BPF cannot attach), pcap (libpcap on "
                 "--pcap-interfaces), off")
      ->envname("TRAINSCOPE_FLOWS")
      ->capture_default_str()
      ->check(CLI::IsMember(EnumNames(kFlowsModeNames)));
  app.add_option("--pcap-interfaces", pcap_interfaces_,
                 "Comma-separated interfaces for pcap mode (default: the "
                 "node's physical NICs; \"any\" captures all)")
      ->envname("TRAINSCOPE_PCAP_INTERFACES");
  app.add_option("--training-ports", training_ports_,
                 "Comma-separated training ports pcap mode captures (both "
                 "directions)")
      ->envname("TRAINSCOPE_TRAINING_PORTS")
      ->capture_default_str();
  app.add_option("--flow-map-entries", options_->map_entries,
                 "Entries of the in-kernel flow map (LRU; one per pod, peer, "
                 "port pair and direction)")
      ->envname("TRAINSCOPE_FLOW_MAP_ENTRIES")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 1 << 24));
  app.add_option("--step-burst-gap", options_->burst_gap_s,
                 "Seconds of silence that end an exchange burst between a "
                 "pod and a peer; training step rates are the period of "
                 "these bursts and the diagnoses' costs their share of time "
                 "(0 = neither; a gap longer than the compute between "
                 "exchanges makes costs run high: docs/diagnosis.md)")
      ->envname("TRAINSCOPE_STEP_BURST_GAP")
      ->capture_default_str()
      ->check(ZeroOrNumberIn(kMinBurstGapSeconds, 1));
  app.add_option("--pcap-buffer-bytes", options_->pcap_buffer_bytes,
                 "Kernel ring buffer per captured interface in pcap mode")
      ->envname("TRAINSCOPE_PCAP_BUFFER_BYTES")
      ->capture_default_str()
      ->check(WholeNumberIn(1 << 16, 1 << 30));
  app.add_option("--cgroup2-path", cgroup2_path_,
                 "cgroup v2 mount the eBPF programs attach under (default: "
                 "--cgroup-root if it is cgroup2, else <cgroup-root>/unified)")
      ->envname("TRAINSCOPE_CGROUP2_PATH");
}

std::string FlowsFlags::Finish() {
  FlowsOptions& f = *options_;
  f.mode = *EnumFromName(kFlowsModeNames, mode_);
  f.pcap_interfaces = SplitCommaList(pcap_interfaces_, false);
  f.training_ports.clear();
  for (const std::string& item : SplitCommaList(training_ports_, false)) {
    int port = 0;
    auto [ptr, ec] =
        std::from_chars(item.data(), item.data() + item.size(), port);
    if (ec != std::errc() || ptr != item.data() + item.size() || port < 1 ||
        port > 65535) {
      return "--training-ports " + training_ports_ +
             ": expected a comma-separated list of ports 1-65535";
    }
    f.training_ports.push_back(static_cast<uint16_t>(port));
  }
  if (f.mode == FlowsMode::kPcap && f.training_ports.empty())
    return "--training-ports: pcap mode needs at least one port";
  f.cgroup2_path = cgroup2_path_;
  f.node_name = *node_name_;
  return {};
}

}  // namespace trainscope
