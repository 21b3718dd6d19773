#include "flows/phase_sums.h"

#include <algorithm>
#include <cmath>
#include <cstddef>

namespace trainscope {

// Two loops, not one: GCC fuses a loop's sine and cosine into sincosf,
// which it does not vectorize.
PhaseSums SumPhases(std::span<const float> angles,
                    std::span<const float> weights) {
  const size_t n = std::min(angles.size(), weights.size());
  PhaseSums sums;
  for (size_t i = 0; i < n; ++i) sums.cos += weights[i] * std::cos(angles[i]);
  for (size_t i = 0; i < n; ++i) sums.sin += weights[i] * std::sin(angles[i]);
  return sums;
}

}  // namespace trainscope
