#include "flows/phase_sums.h"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>
#include <random>
#include <vector>

namespace trainscope {
namespace {

// The vectorised sums (libmvec under -ffast-math) against double-precision
// libm, for lengths around the vector width and a block's length.
TEST(SumPhases, MatchesDoublePrecision) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> angle(0, 2 * std::numbers::pi_v<float>);
  std::uniform_real_distribution<float> weight(1, 3e6);
  for (size_t n : {0u, 1u, 3u, 4u, 5u, 17u, 32u}) {
    std::vector<float> angles(n), weights(n);
    double cos = 0, sin = 0, total = 0;
    for (size_t i = 0; i < n; ++i) {
      angles[i] = angle(rng);
      weights[i] = weight(rng);
      cos += weights[i] * std::cos(static_cast<double>(angles[i]));
      sin += weights[i] * std::sin(static_cast<double>(angles[i]));
      total += weights[i];
    }
    const PhaseSums sums = SumPhases(angles, weights);
    EXPECT_NEAR(sums.cos, cos, 1e-5 * total + 1e-6) << n << " angles";
    EXPECT_NEAR(sums.sin, sin, 1e-5 * total + 1e-6) << n << " angles";
  }
}

TEST(SumPhases, AlignedPhasesSumToTheirWeight) {
  const std::vector<float> angles = {0, 0, 0, 2 * std::numbers::pi_v<float>};
  const std::vector<float> weights = {1, 2, 3, 4};
  const PhaseSums sums = SumPhases(angles, weights);
  EXPECT_NEAR(sums.cos, 10, 1e-4);
  EXPECT_NEAR(sums.sin, 0, 1e-4);
}

}  // namespace
}  // namespace trainscope
