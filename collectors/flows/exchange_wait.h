#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <span>
#include <tuple>
#include <vector>

#include "flows/burst.h"
#include "flows/flow_record.h"

namespace trainscope {

// The time the local pod waited on a peer in one exchange on one
// connection: from the pod's first payload byte in it to the exchange's
// last. Where the pod asked, from the first byte of its request to the last
// of the peer's answer; where it answers, its answer's first byte to its
// last (the peer takes it at its own pace: TensorFlow's worker step waits
// until the PS has pulled its gradient). Silences included: a peer
// throttled by its CPU quota, behind a full link or busy with others
// answers (or reads) in pieces far apart (up to a CFS period, 100 ms), and
// exchange bursts end at every silence over the burst gap.
struct WaitSpan {
  LocalPodRef pod;
  IpAddress peer;
  double start_s = 0;
  double end_s = 0;
};

// Finds the pod's waits in its connections' bursts (BurstEvent: direction
// and turn; docs/flows.md, "Waits on peers"). On a connection the side that
// asks is the one whose peer's port is a server port (the training ports)
// when exactly one of the two ports is; otherwise the side that sent the
// connection's turn 0 (turns alternate, so the asker sends the even turns).
// A request is the asker's turn r, its answer turn r + 1. Where the pod
// answers, the time a request waited at it before its answer began is its
// own work (a gradient asked for before it exists), not a wait. Bursts
// without ports give none.
//
// An exchange is reported once, when a later turn of its connection shows
// (the peer's next request, for an answer of the pod's): a burst is
// reported when its socket next sends in that direction after a silence, so
// a request's burst comes in with the next request and the answer's last
// piece with the next answer, in no fixed order. Bounded: at
// most `max_connections` connections, those silent for a minute go first.
class ExchangeWaits {
 public:
  explicit ExchangeWaits(std::vector<uint16_t> server_ports,
                         size_t max_connections = 16384)
      : server_ports_(std::move(server_ports)),
        max_connections_(max_connections) {}

  // The exchanges that `bursts` complete (any order within and between
  // calls; pieces of a turn already reported are dropped).
  std::vector<WaitSpan> Add(std::span<const BurstEvent> bursts);
  size_t connections() const { return connections_.size(); }

 private:
  using ConnectionKey = std::tuple<LocalPodRef, IpAddress, uint16_t, uint16_t>;
  // One turn's payload on a connection, its pieces joined.
  struct TurnSpan {
    uint32_t turn = 0;
    FlowDirection direction = FlowDirection::kTransmit;
    double start_s = 0;
    double end_s = 0;
  };
  struct Connection {
    std::deque<TurnSpan> turns;  // by turn, the newest few
    uint32_t newest_turn = 0;
    // Turns up to this one are reported or given up; their late pieces
    // are dropped. 0 with nothing done yet.
    uint32_t done_through = 0;
    bool any_done = false;
    double last_s = 0;
  };

  bool LocalAsks(const BurstEvent& b) const;
  Connection& ConnectionOf(const ConnectionKey& key, double t_s);
  static void AddPiece(Connection& c, const BurstEvent& b);
  static void TakeDone(const ConnectionKey& key, Connection& c, bool local_asks,
                       std::vector<WaitSpan>& out);

  std::vector<uint16_t> server_ports_;
  size_t max_connections_;
  std::map<ConnectionKey, Connection> connections_;
};

}  // namespace trainscope
