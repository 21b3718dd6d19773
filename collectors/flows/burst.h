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
};

// The user-space twin of the BPF program's burst tracking, for packets from
// libpcap: the same gap rule, the same event. Bounded: at most `max_streams`
// open bursts; beyond that the oldest open burst is closed early.
class BurstDetector {
 public:
  explicit BurstDetector(double gap_s, size_t max_streams = 16384)
      : gap_s_(gap_s), max_streams_(max_streams) {}

  // One packet of `payload_bytes` (0 for a pure ACK: ignored) at `t_s`.
  void Add(const LocalPodRef& pod, const IpAddress& peer,
           FlowDirection direction, double t_s, uint64_t payload_bytes);
  // Bursts finished since the last call, including those silent for longer
  // than the gap at `now_s` (same clock as the packets).
  std::vector<BurstEvent> Take(double now_s);
  size_t open_streams() const { return open_.size(); }

 private:
  using Key = std::tuple<LocalPodRef, IpAddress, FlowDirection>;
  void Close(const BurstEvent& open) { done_.push_back(open); }

  double gap_s_;
  size_t max_streams_;
  std::map<Key, BurstEvent> open_;
  std::vector<BurstEvent> done_;
};

}  // namespace trainscope
