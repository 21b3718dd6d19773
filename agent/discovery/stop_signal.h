#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace trainscope {

// Lets a background loop wait between rounds yet wake at once on Stop(), so
// shutdown never waits out a poll interval or a backoff.
class StopSignal {
 public:
  void Request() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
  }
  void Reset() {
    std::lock_guard lock(mu_);
    stop_ = false;
  }
  bool requested() const {
    std::lock_guard lock(mu_);
    return stop_;
  }
  // True when stop was requested (before or during the wait).
  template <class Rep, class Period>
  bool WaitFor(std::chrono::duration<Rep, Period> timeout) {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [this] { return stop_; });
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
};

}  // namespace trainscope
