// trainscope-agent: wiring only. Flags -> config -> Agent; signals stop it.
#include <malloc.h>
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include <cstdlib>
#include <variant>

#include "agent.h"
#include "config.h"
#include "log_format.h"

// glibc gives each thread that allocates its own arena (up to 8 per core),
// and every arena keeps the high-water mark of what passed through it: the
// sampler's cycles and each HTTP worker's renders. Two arenas measured 29
// MiB instead of 44 MiB at 110 pods (docs/performance.md); the threads
// hardly contend. MALLOC_ARENA_MAX in the environment still wins.
//
// A fixed mmap threshold also turns off glibc's sliding one, which rises to
// the largest block ever freed (up to 32 MiB): each /metrics page (1.1 MiB
// at 110 pods) would then come from an arena and stay resident after its
// scrape, instead of being mapped and unmapped.
void LimitMallocArenas() {
#ifdef M_ARENA_MAX
  if (std::getenv("MALLOC_ARENA_MAX") == nullptr) mallopt(M_ARENA_MAX, 2);
#endif
#ifdef M_MMAP_THRESHOLD
  if (std::getenv("MALLOC_MMAP_THRESHOLD_") == nullptr) {
    mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  }
#endif
}

// Waits for a stop signal. Meanwhile, once a minute, hands the memory glibc
// keeps in its arenas after frees (pods that left, a history that rolled
// over, a large render) back to the kernel, so RSS follows what the agent
// holds: 1,000 pods churned through the node left RSS 15.6 MiB above its
// start, 10.8 MiB of it freed but kept (docs/reliability.md, "Soaks").
//
// SIGHUP asks daemons to reload; this agent reads its flags and web config
// once, so it says so and goes on (the default action would kill it without
// its shutdown path: BPF links, profiles and connections left to the
// kernel). SIGQUIT stops it like SIGTERM.
int WaitForStopSignal(const sigset_t& handled) {
  const timespec minute{.tv_sec = 60, .tv_nsec = 0};
  for (;;) {
    const int sig = sigtimedwait(&handled, nullptr, &minute);
    if (sig == SIGHUP) {
      spdlog::info(
          "[agent] SIGHUP received: nothing to reload (flags and the web "
          "config are read at start; restart the agent to change them)");
      continue;
    }
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
  trainscope::UseLogFormat(config.log_format);
  spdlog::set_level(spdlog::level::from_str(config.log_level));

  // Signals are taken synchronously by this thread only; every thread the
  // agent starts inherits the blocked mask.
  sigset_t handled;
  sigemptyset(&handled);
  for (int sig : {SIGINT, SIGTERM, SIGQUIT, SIGHUP}) sigaddset(&handled, sig);
  pthread_sigmask(SIG_BLOCK, &handled, nullptr);
  signal(SIGPIPE, SIG_IGN);

  trainscope::Agent agent(std::move(config));
  if (auto started = agent.Start(); !started.ok()) {
    spdlog::critical("[agent] cannot start: {}", started.message());
    return 1;
  }
  const int sig = WaitForStopSignal(handled);
  spdlog::info("[agent] {} received, shutting down", strsignal(sig));
  agent.Stop();
  spdlog::info("[agent] stopped");
  return 0;
}
