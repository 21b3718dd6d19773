#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "trainscope/enum_names.h"

namespace trainscope {

// --step-burst-gap's default: a silence longer than this ends an exchange
// burst.
inline constexpr double kDefaultBurstGapSeconds = 0.02;

// --flows: where per-peer traffic comes from. kEbpf falls back to kPcap
// when BPF cannot attach; kOff runs no flows collector.
enum class FlowsMode { kEbpf, kPcap, kOff };
inline constexpr EnumNameTable<FlowsMode, 3> kFlowsModeNames{
    {{FlowsMode::kEbpf, "ebpf"},
     {FlowsMode::kPcap, "pcap"},
     {FlowsMode::kOff, "off"}}};

struct FlowsOptions {
  FlowsMode mode = FlowsMode::kEbpf;
  std::vector<std::string> pcap_interfaces;  // empty: physical NICs
  std::vector<uint16_t> training_ports = {2222};
  uint32_t map_entries = 65536;
  int pcap_buffer_bytes = 32 << 20;
  std::filesystem::path cgroup2_path;  // empty: found under the cgroup root
  std::string node_name;               // pods on it count as local (pcap)
  // A silence longer than this ends an exchange burst (step rates); 0 off.
  double burst_gap_s = kDefaultBurstGapSeconds;
};

}  // namespace trainscope
