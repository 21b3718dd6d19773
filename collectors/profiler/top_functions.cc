#include "profiler/top_functions.h"

#include <algorithm>

namespace trainscope::profiler {

void TopFunctionWindow::Expire(Clock::time_point now) {
  while (!drains_.empty() && now - drains_.front().at > window_) {
    drains_.pop_front();
  }
}

void TopFunctionWindow::Add(
    Clock::time_point at,
    const std::map<std::string, std::map<std::string, int64_t>>& pods) {
  Drain drain{at, {}};
  for (const auto& [pod, functions] : pods) {
    std::vector<std::pair<std::string, int64_t>> sorted(functions.begin(),
                                                        functions.end());
    std::sort(sorted.begin(), sorted.end(),
              [](const auto& a, const auto& b) { return a.second > b.second; });
    auto& kept = drain.pods[pod];
    for (size_t i = 0; i < sorted.size(); ++i) {
      if (i < per_drain_) {
        kept[sorted[i].first] += sorted[i].second;
      } else {
        kept["[other]"] += sorted[i].second;
      }
    }
  }
  drains_.push_back(std::move(drain));
  Expire(at);
}

TopFunctionWindow::Top TopFunctionWindow::TopOf(const std::string& pod_uid,
                                                size_t n,
                                                Clock::time_point now) {
  Expire(now);
  Top top;
  std::map<std::string, int64_t> sum;
  for (const Drain& d : drains_) {
    auto it = d.pods.find(pod_uid);
    if (it == d.pods.end()) continue;
    for (const auto& [fn, samples] : it->second) {
      sum[fn] += samples;
      top.samples += samples;
    }
  }
  if (!drains_.empty()) {
    top.window_seconds =
        std::chrono::duration<double>(now - drains_.front().at).count();
  }
  std::vector<std::pair<std::string, int64_t>> sorted(sum.begin(), sum.end());
  std::sort(sorted.begin(), sorted.end(),
            [](const auto& a, const auto& b) { return a.second > b.second; });
  for (size_t i = 0; i < sorted.size() && i < n; ++i) {
    top.functions.push_back(
        {sorted[i].first, sorted[i].second,
         top.samples ? double(sorted[i].second) / double(top.samples) : 0});
  }
  return top;
}

}  // namespace trainscope::profiler
