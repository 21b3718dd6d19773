#include "gpu/gpu_flags.h"

#include <CLI/CLI.hpp>

namespace trainscope {

void GpuFlags::Add(CLI::App& app) {
  app.add_option("--nvml-library", options_->nvml_library,
                 "NVML library to dlopen for GPU metrics")
      ->envname("TRAINSCOPE_NVML_LIBRARY")
      ->capture_default_str();
}

}  // namespace trainscope
