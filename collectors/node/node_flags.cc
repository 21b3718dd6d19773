#include "node/node_flags.h"

#include <CLI/CLI.hpp>

#include "trainscope/flag_checks.h"

namespace trainscope {
namespace {

// 10 Tbit/s: above any NIC or bond made; a larger figure is a typo.
constexpr double kMaxLinkMbit = 1e7;
// IFNAMSIZ, with its terminating NUL.
constexpr size_t kMaxInterfaceName = 15;

}  // namespace

void NodeFlags::Add(CLI::App& app) {
  app.add_option("--node-interfaces", interfaces_,
                 "Comma-separated interfaces that are the node's link, for "
                 "node traffic and network saturation (default: the NICs "
                 "with a backing device; bonds, VLANs and bridges have none)")
      ->envname("TRAINSCOPE_NODE_INTERFACES");
  app.add_option("--node-link-mbit", link_mbit_,
                 "Capacity of the node's link in Mbit/s per direction, when "
                 "the driver reports none or the link is shaped (cloud "
                 "instance caps); 0 = the driver's speed")
      ->envname("TRAINSCOPE_NODE_LINK_MBIT")
      ->check(NumberIn(0, kMaxLinkMbit, true));
}

std::string NodeFlags::Finish() {
  options_->interfaces = SplitCommaList(interfaces_, true);
  for (const std::string& name : options_->interfaces) {
    if (name.size() > kMaxInterfaceName ||
        name.find('/') != std::string::npos) {
      return "--node-interfaces: \"" + name +
             "\" is not an interface name (at most 15 characters, no '/')";
    }
  }
  if (link_mbit_ > 0)
    options_->link_speed_bytes_per_second = link_mbit_ * 1e6 / 8;
  return {};
}

}  // namespace trainscope
