#include "flows/exchange_wait.h"

#include <algorithm>

namespace trainscope {
namespace {

// Turns kept per connection: a request, its answer and the next exchange's
// first pieces, with room for pieces that come late.
constexpr size_t kTurnsKept = 6;
// A turn this far behind the connection's newest is a new connection on
// the same ports (its turns start again from 0).
constexpr uint32_t kTurnsBackIsNew = 16;
// Connections silent this long are gone or idle.
constexpr double kQuietSeconds = 60;

}  // namespace

bool ExchangeWaits::LocalAsks(const BurstEvent& b) const {
  auto serves = [this](uint16_t port) {
    return port != 0 && std::find(server_ports_.begin(), server_ports_.end(),
                                  port) != server_ports_.end();
  };
  const bool local_serves = serves(b.local_port);
  const bool peer_serves = serves(b.peer_port);
  if (local_serves != peer_serves) return peer_serves;
  // The asker speaks first: turn 0, and every even turn after it.
  return (b.turn % 2 == 0) == (b.direction == FlowDirection::kTransmit);
}

ExchangeWaits::Connection& ExchangeWaits::ConnectionOf(const ConnectionKey& key,
                                                       double t_s) {
  auto it = connections_.find(key);
  if (it != connections_.end()) return it->second;
  if (connections_.size() >= max_connections_) {
    std::erase_if(connections_, [t_s](const auto& c) {
      return c.second.last_s < t_s - kQuietSeconds;
    });
    // Still full: start over, which loses at most the exchanges in flight.
    if (connections_.size() >= max_connections_) connections_.clear();
  }
  return connections_[key];
}

void ExchangeWaits::AddPiece(Connection& c, const BurstEvent& b) {
  c.newest_turn = std::max(c.newest_turn, b.turn);
  c.last_s = std::max(c.last_s, b.end_s);
  auto at = std::lower_bound(
      c.turns.begin(), c.turns.end(), b.turn,
      [](const TurnSpan& s, uint32_t turn) { return s.turn < turn; });
  if (at != c.turns.end() && at->turn == b.turn) {
    if (at->direction != b.direction) return;  // not this connection's turn
    at->start_s = std::min(at->start_s, b.start_s);
    at->end_s = std::max(at->end_s, b.end_s);
  } else {
    c.turns.insert(at, TurnSpan{b.turn, b.direction, b.start_s,
                                std::max(b.start_s, b.end_s)});
  }
  while (c.turns.size() > kTurnsKept) {
    c.done_through = c.turns.front().turn;
    c.any_done = true;
    c.turns.pop_front();
  }
}

void ExchangeWaits::TakeDone(const ConnectionKey& key, Connection& c,
                             bool local_asks, std::vector<WaitSpan>& out) {
  for (size_t i = 0; !local_asks && i < c.turns.size(); ++i) {
    // The pod's answer, from its first byte to its last: the peer takes it
    // at its own pace.
    const TurnSpan& answer = c.turns[i];
    if (answer.direction != FlowDirection::kTransmit ||
        c.newest_turn < answer.turn + 1)
      continue;
    out.push_back(
        {std::get<0>(key), std::get<1>(key), answer.start_s, answer.end_s});
    c.done_through = answer.turn;
    c.any_done = true;
  }
  for (size_t i = 0; local_asks && i + 1 < c.turns.size(); ++i) {
    const TurnSpan& request = c.turns[i];
    const TurnSpan& answer = c.turns[i + 1];
    if (request.direction != FlowDirection::kTransmit ||
        answer.turn != request.turn + 1 || c.newest_turn < answer.turn + 1)
      continue;
    out.push_back({std::get<0>(key), std::get<1>(key), request.start_s,
                   std::max(request.start_s, answer.end_s)});
    c.done_through = answer.turn;
    c.any_done = true;
  }
  // Turns two behind the newest are complete: reported above, or missing
  // their request or answer (a lost event), and given up.
  while (!c.turns.empty() &&
         (c.turns.front().turn + 3 <= c.newest_turn ||
          (c.any_done && c.turns.front().turn <= c.done_through))) {
    c.done_through = std::max(c.done_through, c.turns.front().turn);
    c.any_done = true;
    c.turns.pop_front();
  }
}

std::vector<WaitSpan> ExchangeWaits::Add(std::span<const BurstEvent> bursts) {
  std::vector<WaitSpan> out;
  for (const BurstEvent& b : bursts) {
    if (b.local_port == 0 && b.peer_port == 0) continue;  // no connection
    const bool local_asks = LocalAsks(b);
    const ConnectionKey key{b.pod, b.peer, b.local_port, b.peer_port};
    Connection& c = ConnectionOf(key, b.end_s);
    if (b.turn + kTurnsBackIsNew < c.newest_turn ||
        b.start_s < c.last_s - kQuietSeconds)
      c = Connection{};  // the ports' new connection, or a clock reset
    if (c.any_done && b.turn <= c.done_through) continue;  // a late piece
    AddPiece(c, b);
    TakeDone(key, c, local_asks, out);
  }
  return out;
}

}  // namespace trainscope
