#include "compute.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <thread>

namespace trainsim {
namespace {

double ThreadCpuMs() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 +
         static_cast<double>(ts.tv_nsec) / 1e6;
}

// Short naps, so a stop request ends the wait within one of them.
constexpr std::chrono::milliseconds kNap(10);

}  // namespace

void ComputeStep(int ms, ComputeOn on, const StopState& stop) {
  if (on == ComputeOn::kAccelerator) {
    const auto until =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    while (!stop.stop) {
      const auto now = std::chrono::steady_clock::now();
      if (now >= until) break;
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(kNap, until - now));
    }
    return;
  }
  const double until = ThreadCpuMs() + ms;
  volatile uint64_t x = 1;
  while (!stop.stop && ThreadCpuMs() < until)
    for (int i = 0; i < 20000; ++i) x = x * 6364136223846793005ULL + 1;
}

}  // namespace trainsim
