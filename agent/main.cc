// trainscope-agent: wiring only. Flags -> config -> Agent; signals stop it.
#include <malloc.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <variant>

#include "agent.h"
#include "config.h"

// glibc gives each thread that allocates its own arena (up to 8 per core),
// and every arena keeps the high-water mark of what passed through it: the
// sampler's cycles and each HTTP worker's renders. Two arenas measured 29
// MiB instead of 44 MiB at 110 pods (docs/performance.md); the threads
// hardly contend. MALLOC_ARENA_MAX in the environment still wins.
void LimitMallocArenas() {
#ifdef M_ARENA_MAX
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
#endif
}

// Waits for a stop signal. Meanwhile, once a minute, hands the memory glibc
// keeps in its arenas after frees (pods that left, a history that rolled
// over, a large render) back to the kernel, so RSS follows what the agent
// holds: 1,000 pods churned through the node left RSS 15.6 MiB above its
// start, 10.8 MiB of it freed but kept (docs/reliability.md, "Soaks").
int WaitForStopSignal(const sigset_t& stop_signals) {
  const timespec minute{.tv_sec = 60, .tv_nsec = 0};
  for (;;) {
    const int sig = sigtimedwait(&stop_signals, nullptr, &minute);
    if (sig > 0) return sig;
    malloc_trim(0);
  }
}

int main(int argc, char** argv) {
  LimitMallocArenas();
  auto parsed = trainscope::ParseAgentConfig(argc, argv);
  if (auto* exit = std::get_if<trainscope::ExitRequest>(&parsed)) {
    return exit->code;
  }
  auto config = std::get<trainscope::AgentConfig>(std::move(parsed));

  spdlog::set_default_logger(spdlog::stderr_color_mt("trainscope"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v");
  spdlog::set_level(spdlog::level::from_str(config.log_level));

  // Signals are taken synchronously by this thread only; every thread the
  // agent starts inherits the blocked mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  trainscope::Agent agent(std::move(config));
  if (auto started = agent.Start(); !started.ok()) {
    spdlog::critical("[agent] cannot start: {}", started.message());
    return 1;
  }
  const int sig = WaitForStopSignal(stop_signals);
  spdlog::info("[agent] {} received, shutting down", strsignal(sig));
  agent.Stop();
  spdlog::info("[agent] stopped");
  return 0;
}
