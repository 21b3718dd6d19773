#include "profiler/profiler_flags.h"

#include <CLI/CLI.hpp>

#include "trainscope/flag_checks.h"

namespace trainscope::profiler {

void ProfilerFlags::Add(CLI::App& app) {
  app.add_option("--profiler", profiler_,
                 "On-demand CPU/off-CPU profiles of pods through "
                 "/api/v1/profile (perf_event + BPF; docs/profiling.md)")
      ->envname("TRAINSCOPE_PROFILER")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--profile-max-seconds", (*on_demand_)->max_seconds,
                 "Longest profile /api/v1/profile accepts (seconds=)")
      ->envname("TRAINSCOPE_PROFILE_MAX_SECONDS")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 3600));
  app.add_option("--profile-max-concurrent", (*on_demand_)->max_concurrent,
                 "Profiles running at once on this node (one per pod); one "
                 "more is answered 429")
      ->envname("TRAINSCOPE_PROFILE_MAX_CONCURRENT")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 64));
  app.add_option("--profile-max-hz", (*on_demand_)->max_hz,
                 "Highest sampling rate (hz=, per CPU) a CPU profile may ask "
                 "for; the default rate is 99")
      ->envname("TRAINSCOPE_PROFILE_MAX_HZ")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 10000));
  app.add_option("--profile-continuous", continuous_mode_,
                 "Low-rate CPU profiling of every training pod, kept as each "
                 "pod's top functions over the last 5 minutes "
                 "(/api/v1/profile/top, diagnosis evidence); needs "
                 "--profiler on")
      ->envname("TRAINSCOPE_PROFILE_CONTINUOUS")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--profile-continuous-hz", (*continuous_)->hz,
                 "Samples per second per CPU of the continuous profile")
      ->envname("TRAINSCOPE_PROFILE_CONTINUOUS_HZ")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 1000));
  app.add_option("--profile-continuous-offcpu", continuous_offcpu_,
                 "Also keep each training pod's top off-CPU wait sites "
                 "(sched_switch on every context switch of the node; "
                 "/api/v1/profile/top?type=offcpu, straggler evidence)")
      ->envname("TRAINSCOPE_PROFILE_CONTINUOUS_OFFCPU")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
}

std::string ProfilerFlags::Finish() {
  (*on_demand_)->host = (*continuous_)->host = *host_;
  (*on_demand_)->cgroup2_path = (*continuous_)->cgroup2_path = *cgroup2_path_;
  (*continuous_)->offcpu = continuous_offcpu_ == "on";
  // The continuous profile runs on the profiler's machinery.
  if (profiler_ != "on" || continuous_mode_ != "on") continuous_->reset();
  if (profiler_ != "on") on_demand_->reset();
  return {};
}

}  // namespace trainscope::profiler
