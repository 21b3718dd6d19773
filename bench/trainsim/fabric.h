#pragma once

#include <cstdint>
#include <string>

#include "layout.h"

namespace trainsim {

// The network of a cluster scenario: one bridge per node (its pods' veths),
// one shared fabric bridge, and per node an uplink veth pair from its
// bridge to the fabric. Same-node traffic stays on the node bridge;
// cross-node traffic leaves through the sender's uplink and enters through
// the receiver's. No bridge has an address, so nothing is routed off the
// machine. Removal is by name pattern (netns.cc RemoveRunNetwork).
void CreateClusterNetwork(const Layout& layout);

// Shapes a node's uplink to `mbit` both ways: tbf on the egress of the
// node-side end (the node's upload) and of the fabric-side end (its
// download).
void LimitUplink(const SimNodeInfo& node, double mbit);

struct LinkCounters {
  uint64_t rx_bytes = 0, tx_bytes = 0, rx_packets = 0, tx_packets = 0;
};
// /sys/class/net/<dev>/statistics; zeros when the link does not exist.
LinkCounters ReadLinkCounters(const std::string& dev);

}  // namespace trainsim
