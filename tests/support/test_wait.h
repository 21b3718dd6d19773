#pragma once

#include <chrono>
#include <functional>
#include <thread>

namespace trainscope::testing {

// Polls `done` every few milliseconds until it holds or `timeout` passes;
// returns its last value. For conditions owned by another thread that offer
// no notification of their own.
inline bool WaitUntil(
    const std::function<bool()>& done,
    std::chrono::milliseconds timeout = std::chrono::milliseconds(5000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return done();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

}  // namespace trainscope::testing
