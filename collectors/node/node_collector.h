#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "trainscope/collector.h"

namespace trainscope {

// Node totals: CPU time, memory, and the physical NICs with their link
// speed (the capacity the network diagnosis compares against).
struct NodeOptions {
  // The interfaces that are the node's link; empty = every NIC with a
  // backing device (veths, bridges and tunnels have none).
  std::vector<std::string> interfaces;
  // Capacity per direction when the driver's speed is missing or not the
  // binding limit (a shaped or capped link).
  std::optional<double> link_speed_bytes_per_second;
};

class NodeCollector : public Collector {
 public:
  explicit NodeCollector(HostPaths host, NodeOptions options = {});
  std::string_view name() const override { return "node"; }
  Status Collect(const CollectContext& ctx, Snapshot& out) override;

 private:
  bool IsNodeLink(const std::filesystem::path& class_net,
                  const std::string& device) const;

  HostPaths host_;
  NodeOptions options_;
  double ticks_per_second_;
};

}  // namespace trainscope
