#pragma once

#include <filesystem>
#include <optional>
#include <string>

#include "profiler/profiler_options.h"
#include "trainscope/collector_flags.h"
#include "trainscope/host_paths.h"

namespace trainscope::profiler {

// --profiler, --profile-max-*, --profile-continuous*: the on-demand and the
// continuous profilers' options, each reset when its flags turn it off.
class ProfilerFlags final : public CollectorFlags {
 public:
  // `host` and `cgroup2_path` (--cgroup2-path, declared with the flows
  // collector, whose BPF programs share it) are read at Finish.
  ProfilerFlags(std::optional<ProfilerOptions>* on_demand,
                std::optional<ContinuousOptions>* continuous,
                const HostPaths* host,
                const std::filesystem::path* cgroup2_path)
      : on_demand_(on_demand),
        continuous_(continuous),
        host_(host),
        cgroup2_path_(cgroup2_path) {}
  void Add(CLI::App& app) override;
  std::string Finish() override;

 private:
  std::optional<ProfilerOptions>* on_demand_;
  std::optional<ContinuousOptions>* continuous_;
  const HostPaths* host_;
  const std::filesystem::path* cgroup2_path_;
  std::string profiler_ = "on";
  std::string continuous_mode_ = "on";
  std::string continuous_offcpu_ = "off";
};

}  // namespace trainscope::profiler
