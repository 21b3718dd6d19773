#pragma once

#include <string>

#include "trainscope/collector_flags.h"

namespace trainscope {

// --nvml-library: the NVML the GPU collector loads.
class GpuFlags final : public CollectorFlags {
 public:
  explicit GpuFlags(std::string* nvml_library) : nvml_library_(nvml_library) {}
  void Add(CLI::App& app) override;
  std::string Finish() override { return {}; }

 private:
  std::string* nvml_library_;
};

}  // namespace trainscope
