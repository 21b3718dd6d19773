#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <vector>

namespace trainscope::profiler {

// Per pod, the on-CPU samples of its leaf functions over the last
// `window`, from the continuous profiler's drains. Bounded: each drain keeps
// at most `per_drain` functions per pod (the rest count as "[other]"), and
// drains older than the window are dropped. Pure; not thread-safe.
class TopFunctionWindow {
 public:
  using Clock = std::chrono::steady_clock;
  TopFunctionWindow(std::chrono::seconds window, size_t per_drain)
      : window_(window), per_drain_(per_drain) {}

  // One drain: pod uid -> function -> samples.
  void Add(Clock::time_point at,
           const std::map<std::string, std::map<std::string, int64_t>>& pods);

  struct Entry {
    std::string function;
    int64_t samples = 0;
    double share = 0;  // of the pod's samples in the window
  };
  struct Top {
    int64_t samples = 0;           // all of the pod's samples in the window
    double window_seconds = 0;     // time the window's drains cover
    std::vector<Entry> functions;  // most samples first
  };
  Top TopOf(const std::string& pod_uid, size_t n, Clock::time_point now);
  size_t drains() const { return drains_.size(); }

 private:
  void Expire(Clock::time_point now);

  struct Drain {
    Clock::time_point at;
    std::map<std::string, std::map<std::string, int64_t>> pods;
  };
  std::chrono::seconds window_;
  size_t per_drain_;
  std::deque<Drain> drains_;
};

}  // namespace trainscope::profiler
