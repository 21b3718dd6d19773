#pragma once

#include <span>

namespace trainscope {

// The weighted sums of the cosines and sines of `angles` (radians, within
// one turn): the comb's alignment (step_period.cc), its hottest loop, which
// takes them for every burst of every candidate period of every window and
// merge scale. Built apart with -O3 -ffast-math, so that GCC calls glibc's
// vector sine and cosine (libmvec) on four angles at a time.
struct PhaseSums {
  float cos = 0;
  float sin = 0;
};
PhaseSums SumPhases(std::span<const float> angles,
                    std::span<const float> weights);

}  // namespace trainscope
