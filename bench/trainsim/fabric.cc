#include "fabric.h"

#include <spdlog/spdlog.h>

#include <fstream>

#include "exec.h"
#include "netns.h"

namespace trainsim {

void CreateClusterNetwork(const Layout& layout) {
  CreateBridge(layout.fabric_bridge);
  for (const SimNodeInfo& node : layout.nodes) {
    CreateBridge(node.bridge);
    MustRun({"ip", "link", "add", node.uplink, "type", "veth", "peer", "name",
             node.fabric_end});
    for (const auto& [end, bridge] :
         {std::pair{node.uplink, node.bridge},
          std::pair{node.fabric_end, layout.fabric_bridge}}) {
      MustRun({"ip", "link", "set", end, "addrgenmode", "none"});
      MustRun({"ip", "link", "set", end, "master", bridge});
      MustRun({"ip", "link", "set", end, "up"});
    }
    if (node.nic_mbit > 0) LimitUplink(node, node.nic_mbit);
    spdlog::info("[trainsim] node {}: bridge {}, uplink {} ({})", node.name,
                 node.bridge, node.uplink,
                 node.nic_mbit > 0 ? fmt::format("{} Mbit/s", node.nic_mbit)
                                   : std::string("not shaped"));
  }
}

void LimitUplink(const SimNodeInfo& node, double mbit) {
  ShapeEgress(node.uplink, mbit);
  ShapeEgress(node.fabric_end, mbit);
}

LinkCounters ReadLinkCounters(const std::string& dev) {
  auto read = [&](const char* name) {
    std::ifstream in("/sys/class/net/" + dev + "/statistics/" + name);
    uint64_t v = 0;
    in >> v;
    return v;
  };
  return {read("rx_bytes"), read("tx_bytes"), read("rx_packets"),
          read("tx_packets")};
}

}  // namespace trainsim
