// Kubernetes quantities (resources) and the CNI bandwidth annotations.

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "kube/quantity.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace trainscope;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  // The contract: a value is a finite, non-negative number (a bandwidth a
  // positive one); anything else is refused.
  if (auto q = ParseQuantity(text); q && (!std::isfinite(*q) || *q < 0)) {
    std::abort();
  }
  if (auto bw = ParseBandwidthAnnotation(text);
      bw && (!std::isfinite(*bw) || *bw <= 0)) {
    std::abort();
  }
  return 0;
}
