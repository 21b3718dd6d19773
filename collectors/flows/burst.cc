#include "flows/burst.h"

#include <algorithm>

namespace trainscope {

void BurstDetector::Add(const LocalPodRef& pod, const IpAddress& peer,
                        FlowDirection direction, double t_s,
                        uint64_t payload_bytes) {
  if (gap_s_ <= 0 || payload_bytes == 0) return;
  const Key key{pod, peer, direction};
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
    b = BurstEvent{pod, peer, direction, t_s, t_s, payload_bytes, 1};
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
  open_.emplace(key,
                BurstEvent{pod, peer, direction, t_s, t_s, payload_bytes, 1});
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
