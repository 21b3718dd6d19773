#pragma once

#include <string>

namespace trainscope::soak {

// A network namespace this run creates, joined to the host by a veth pair
// with a /30 from 198.19.0.0/16 (trainsim's pods use 198.18.0.0/16): the
// churned pods send their datagrams to the far end, so the agent's eBPF
// program counts them (it skips loopback peers) and nothing leaves the
// host. The destructor deletes the namespace, and the veth pair with it.
class PeerNetns {
 public:
  // Throws std::runtime_error when `ip` fails (after undoing what it did).
  explicit PeerNetns(const std::string& run_id);
  ~PeerNetns();
  PeerNetns(const PeerNetns&) = delete;
  PeerNetns& operator=(const PeerNetns&) = delete;

  // The address in the namespace that pods send to.
  const std::string& peer_address() const { return peer_; }

 private:
  void Remove();

  std::string ns_;
  std::string host_if_;
  std::string peer_;
};

}  // namespace trainscope::soak
