#pragma once

#include <string>

#include "flows/flows_options.h"
#include "trainscope/collector_flags.h"

namespace trainscope {

// --flows, --pcap-interfaces, --training-ports, --flow-map-entries,
// --step-burst-gap, --pcap-buffer-bytes and --cgroup2-path (which the
// profiler's BPF programs share) into FlowsOptions.
class FlowsFlags final : public CollectorFlags {
 public:
  // `node_name` is read at Finish, once the agent has settled it.
  FlowsFlags(FlowsOptions* options, const std::string* node_name);
  void Add(CLI::App& app) override;
  std::string Finish() override;

 private:
  FlowsOptions* options_;
  const std::string* node_name_;
  std::string mode_;
  std::string pcap_interfaces_;  // comma list; "" = physical NICs
  std::string training_ports_ = "2222";
  std::string cgroup2_path_;  // "" = found under --cgroup-root
};

}  // namespace trainscope
