#pragma once

#include <string>
#include <vector>

#include "layout.h"

namespace trainsim {

// The run's bridge: no address, so the host neither routes to nor forwards
// from the pods' network; pods only reach each other.
void CreateBridge(const Layout& layout);
void CreateBridge(const std::string& name);
// netns + veth pair (host side on the bridge, pod side renamed eth0 with the
// pod's /15 address), loopback up, no default route. Throws on failure.
void CreatePodNetwork(const Layout& layout, const SimPod& pod);
// tc tbf on both ends of the pod's veth: the host side's egress is the
// pod's ingress, eth0's egress the pod's egress.
void LimitBandwidth(const SimPod& pod, double mbit);
// tc tbf at `mbit` on the egress of host interface `dev`.
void ShapeEgress(const std::string& dev, double mbit);

// Deletes the run's netns, veths and bridge (qdiscs go with their links).
// Returns what it could not remove.
std::vector<std::string> RemoveRunNetwork(const std::string& run_id);

// Run ids that still own a netns or link (for `trainsim cleanup`).
std::vector<std::string> RunIdsInNetwork();

// The path setns() takes for a named netns.
std::string NetnsPath(const std::string& netns);

}  // namespace trainsim
