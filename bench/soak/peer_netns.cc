#include "peer_netns.h"

#include <cstdlib>
#include <stdexcept>

#include "exec.h"

namespace trainscope::soak {

PeerNetns::PeerNetns(const std::string& run_id)
    : ns_("tsoak-" + run_id), host_if_("tsk" + run_id + "h") {
  // Two runs at once (the test and the bench) get different /30s unless
  // their random run ids share the bytes used here.
  const unsigned long id = std::strtoul(run_id.c_str(), nullptr, 16);
  const std::string net = "198.19." + std::to_string((id >> 8) & 0xff) + ".";
  const unsigned base = 4 * (id & 0x3f);
  const std::string host = net + std::to_string(base + 1);
  peer_ = net + std::to_string(base + 2);
  const std::string peer_if = "tsk" + run_id + "p";
  try {
    trainsim::MustRun({"ip", "netns", "add", ns_});
    trainsim::MustRun({"ip", "link", "add", host_if_, "type", "veth", "peer",
                       "name", peer_if, "netns", ns_});
    trainsim::MustRun({"ip", "addr", "add", host + "/30", "dev", host_if_});
    trainsim::MustRun({"ip", "link", "set", host_if_, "up"});
    trainsim::MustRun(
        {"ip", "-n", ns_, "addr", "add", peer_ + "/30", "dev", peer_if});
    trainsim::MustRun({"ip", "-n", ns_, "link", "set", peer_if, "up"});
  } catch (...) {
    Remove();
    throw;
  }
}

PeerNetns::~PeerNetns() { Remove(); }

void PeerNetns::Remove() {
  trainsim::RunCommand({"ip", "link", "del", host_if_});
  trainsim::RunCommand({"ip", "netns", "del", ns_});
}

}  // namespace trainscope::soak
