#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <tuple>
#include <vector>

#include "flows/flow_record.h"

namespace trainscope {

// One exchange burst between a local pod and a peer in one direction: the
// payload-carrying packets with no silence longer than the burst gap between
// them. eBPF finds them in the kernel per socket (peer_flows.bpf.c), pcap in
// user space per peer (BurstDetector); both report them in this shape, and
// AddToTrain (step_period.h) joins the pieces of a peer's connections. Times
// are seconds on the source's own clock (monotonic for eBPF, the capture's for
// pcap).
struct BurstEvent {
  LocalPodRef pod;
  IpAddress peer;
  FlowDirection direction = FlowDirection::kReceive;
  double start_s = 0;
  double end_s = 0;
  uint64_t payload_bytes = 0;
  uint32_t packets = 0;
  // The burst's connection (both ports 0: unknown) and its turn there: how
  // many times the connection's payload changed direction before the burst
  // began. Bursts of one connection and direction with the same turn are
  // pieces of one exchange, cut by a silence longer than the gap (a
  // contended link), with no request or reply between them.
  uint16_t local_port = 0;
  uint16_t peer_port = 0;
  uint32_t turn = 0;
};

// The user-space twin of the BPF program's burst tracking, for packets from
// libpcap: the same gap rule per connection, the same turns, the same event.
// Bounded: at most `max_streams` open bursts, beyond that the oldest open
// burst is closed early, and as many connections' turns.
class BurstDetector {
 public:
  explicit BurstDetector(double gap_s, size_t max_streams = 16384)
      : gap_s_(gap_s), max_streams_(max_streams) {}

  // One packet of `payload_bytes` (0 for a pure ACK: ignored) at `t_s`, on
  // the connection of the two ports (0 for a protocol without them).
  void Add(const LocalPodRef& pod, const IpAddress& peer,
           FlowDirection direction, double t_s, uint64_t payload_bytes,
           uint16_t local_port = 0, uint16_t peer_port = 0);
  // Bursts finished since the last call, including those silent for longer
  // than the gap at `now_s` (same clock as the packets).
  std::vector<BurstEvent> Take(double now_s);
  size_t open_streams() const { return open_.size(); }

 private:
  using Connection = std::tuple<LocalPodRef, IpAddress, uint16_t, uint16_t>;
  using Key = std::tuple<Connection, FlowDirection>;
  struct Turns {
    uint32_t turns = 0;
    FlowDirection last = FlowDirection::kReceive;
    double last_s = 0;
  };
  // The connection's turn for a payload packet in `direction` at `t_s`.
  uint32_t Turn(const Connection& connection, FlowDirection direction,
                double t_s);
  void Close(const BurstEvent& open) { done_.push_back(open); }

  double gap_s_;
  size_t max_streams_;
  std::map<Key, BurstEvent> open_;
  std::map<Connection, Turns> turns_;
  std::vector<BurstEvent> done_;
};

}  // namespace trainscope
