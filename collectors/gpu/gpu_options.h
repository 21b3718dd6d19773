#pragma once

#include <string>

namespace trainscope {

// What the GPU collector's flags set (gpu_flags.h).
struct GpuOptions {
  // --nvml-library: the NVML to dlopen.
  std::string nvml_library = "libnvidia-ml.so.1";
};

}  // namespace trainscope
