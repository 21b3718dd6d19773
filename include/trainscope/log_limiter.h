#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace trainscope {

// Rate limit for a log line that would otherwise repeat every cycle (a pod
// file that stays broken, an API server that stays down): the first
// occurrence of a key is logged, then at most one line per interval, which
// says how many repeats it held back. Clear() when the condition ends, so
// the next failure is logged at once. Thread-safe.
class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LogLimiter(Clock::duration interval = std::chrono::minutes(5));

  // The line to log for this occurrence of `key` (the message, plus a note
  // of the repeats held back since the last line), or nothing.
  std::optional<std::string> Pass(const std::string& key, std::string message,
                                  Clock::time_point now = Clock::now());
  // The condition behind `key` cleared; true when it had been seen.
  bool Clear(const std::string& key);
  // Everything cleared (a source that works again).
  void ClearAll();

  // Keys remembered at most; beyond, the memory starts over (bounds a
  // failure whose message, used as key, keeps changing).
  static constexpr size_t kMaxKeys = 256;

 private:
  struct Seen {
    Clock::time_point last_logged;
    uint64_t suppressed = 0;
  };
  Clock::duration interval_;
  std::mutex mu_;
  std::unordered_map<std::string, Seen> seen_;
};

// "5m", "30s", "1h": how the suppression note names an interval.
std::string ShortDuration(std::chrono::steady_clock::duration d);

}  // namespace trainscope
