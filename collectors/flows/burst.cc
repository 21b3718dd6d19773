#include "flows/burst.h"

#include <algorithm>

namespace trainscope {

uint32_t BurstDetector::Turn(const Connection& connection,
                             FlowDirection direction, double t_s) {
  auto it = turns_.find(connection);
  if (it == turns_.end()) {
    if (turns_.size() >= max_streams_) {
      // Connections silent for a minute are gone or idle; should that not
      // be enough, all start again from turn 0, which splits at most the
      // exchanges in progress.
      std::erase_if(
          turns_, [t_s](const auto& c) { return c.second.last_s < t_s - 60; });
      if (turns_.size() >= max_streams_) turns_.clear();
    }
    turns_.emplace(connection, Turns{0, direction, t_s});
    return 0;
  }
  Turns& t = it->second;
  if (t.last != direction) ++t.turns;
  t.last = direction;
  t.last_s = t_s;
  return t.turns;
}

void BurstDetector::Add(const LocalPodRef& pod, const IpAddress& peer,
                        FlowDirection direction, double t_s,
                        uint64_t payload_bytes, uint16_t local_port,
                        uint16_t peer_port) {
  if (gap_s_ <= 0 || payload_bytes == 0) return;
  const Connection connection{pod, peer, local_port, peer_port};
  const uint32_t turn = Turn(connection, direction, t_s);
  const BurstEvent fresh{pod,           peer, direction,  t_s,       t_s,
                         payload_bytes, 1,    local_port, peer_port, turn};
  const Key key{connection, direction};
  auto it = open_.find(key);
  if (it != open_.end()) {
    BurstEvent& b = it->second;
    if (t_s - b.end_s <= gap_s_) {
      b.end_s = std::max(b.end_s, t_s);
      b.payload_bytes += payload_bytes;
      b.packets += 1;
      return;
    }
    Close(b);
    b = fresh;
    return;
  }
  if (open_.size() >= max_streams_) {
    // Close the stalest open burst: it is the likeliest to be over anyway.
    auto stalest = std::min_element(open_.begin(), open_.end(),
                                    [](const auto& a, const auto& b) {
                                      return a.second.end_s < b.second.end_s;
                                    });
    Close(stalest->second);
    open_.erase(stalest);
  }
  open_.emplace(key, fresh);
}

std::vector<BurstEvent> BurstDetector::Take(double now_s) {
  for (auto it = open_.begin(); it != open_.end();) {
    if (now_s - it->second.end_s > gap_s_) {
      Close(it->second);
      it = open_.erase(it);
    } else {
      ++it;
    }
  }
  std::vector<BurstEvent> out;
  out.swap(done_);
  return out;
}

}  // namespace trainscope
