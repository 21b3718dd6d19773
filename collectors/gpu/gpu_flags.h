#pragma once

#include <string>

#include "gpu/gpu_options.h"
#include "trainscope/collector_flags.h"

namespace trainscope {

// --nvml-library: the NVML the GPU collector loads.
class GpuFlags final : public CollectorFlags {
 public:
  explicit GpuFlags(GpuOptions* options) : options_(options) {}
  void Add(CLI::App& app) override;
  std::string Finish() override { return {}; }

 private:
  GpuOptions* options_;
};

}  // namespace trainscope
