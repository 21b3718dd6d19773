#include "flows/step_period.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

namespace trainscope {
namespace {

// A synthetic exchange train: one big burst per period (the step's pull or
// push), optionally a small one (a request or an acknowledgement) in
// between, with Gaussian jitter and randomly missing big bursts.
struct Train {
  double period_s = 1;
  int cycles = 40;
  double jitter = 0;   // standard deviation / period
  double missing = 0;  // fraction of big bursts dropped
  bool small_between = false;
  double offset_s = 100;
  uint64_t big_bytes = 1'000'000;
  unsigned seed = 7;

  std::vector<BurstPoint> Make() const {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0, jitter * period_s);
    std::uniform_real_distribution<double> coin(0, 1);
    std::vector<BurstPoint> out;
    for (int k = 0; k < cycles; ++k) {
      const double t = offset_s + k * period_s + (jitter > 0 ? noise(rng) : 0);
      if (coin(rng) >= missing) out.push_back({t, big_bytes});
      if (small_between) out.push_back({t + 0.4 * period_s, 200});
    }
    std::sort(out.begin(), out.end(),
              [](const BurstPoint& a, const BurstPoint& b) {
                return a.start_s < b.start_s;
              });
    return out;
  }
};

struct Case {
  const char* name;
  Train train;
  double want_period_s;  // 0: no clear period expected
};

class EstimatePeriodTest : public ::testing::TestWithParam<Case> {};

TEST_P(EstimatePeriodTest, FindsThePeriodOrSaysThereIsNone) {
  const Case& c = GetParam();
  const auto bursts = c.train.Make();
  const auto got = EstimatePeriod(bursts);
  if (c.want_period_s == 0) {
    EXPECT_FALSE(got.has_value()) << "period " << got->period_s;
    return;
  }
  ASSERT_TRUE(got.has_value());
  EXPECT_NEAR(got->period_s, c.want_period_s, 0.03 * c.want_period_s);
}

INSTANTIATE_TEST_SUITE_P(
    Trains, EstimatePeriodTest,
    ::testing::Values(
        Case{"exact_1s", {.period_s = 1}, 1},
        Case{"fast_100ms", {.period_s = 0.1, .cycles = 300}, 0.1},
        Case{"slow_5s", {.period_s = 5, .cycles = 14}, 5},
        Case{"jitter_10pct",
             {.period_s = 0.5, .cycles = 80, .jitter = 0.1},
             0.5},
        Case{"missing_30pct",
             {.period_s = 0.3, .cycles = 100, .missing = 0.3},
             0.3},
        Case{"small_bursts_between",
             {.period_s = 0.8, .small_between = true},
             0.8},
        Case{"jitter_and_missing",
             {.period_s = 2, .cycles = 30, .jitter = 0.08, .missing = 0.2},
             2},
        Case{"too_few_cycles", {.period_s = 1, .cycles = 3}, 0},
        Case{"pure_noise", {.period_s = 1, .cycles = 60, .jitter = 0.6}, 0}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

std::vector<BurstPoint> Merge(std::vector<BurstPoint> a,
                              const std::vector<BurstPoint>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end(), [](const BurstPoint& x, const BurstPoint& y) {
    return x.start_s < y.start_s;
  });
  return a;
}

TEST(EstimatePeriod, TwoInterleavedPeriodsOfEqualWeightGiveNone) {
  const auto a = Train{.period_s = 1.0, .cycles = 60}.Make();
  const auto b =
      Train{.period_s = 1.37, .cycles = 44, .offset_s = 100.2}.Make();
  EXPECT_FALSE(EstimatePeriod(Merge(a, b)).has_value());
}

TEST(EstimatePeriod, InterleavedTrainOfSmallBurstsIsIgnored) {
  const auto a = Train{.period_s = 1.0, .cycles = 60}.Make();
  const auto b = Train{.period_s = 1.37,
                       .cycles = 44,
                       .offset_s = 100.2,
                       .big_bytes = 20'000}
                     .Make();
  const auto got = EstimatePeriod(Merge(a, b));
  ASSERT_TRUE(got.has_value());
  EXPECT_NEAR(got->period_s, 1.0, 0.01);
}

TEST(EstimatePeriod, ReportsJitterAndCycles) {
  const auto got =
      EstimatePeriod(Train{.period_s = 1, .cycles = 50, .jitter = 0.05}.Make());
  ASSERT_TRUE(got.has_value());
  EXPECT_GT(got->jitter, 0.02);
  EXPECT_LT(got->jitter, 0.1);
  EXPECT_GE(got->cycles, 45);
  EXPECT_GT(got->alignment, 0.9);
}

TEST(MergeBursts, JoinsPiecesSeparatedByShortSilences) {
  const std::vector<BurstPoint> in = {
      {1.00, 100, 1.01}, {1.04, 200, 1.05}, {1.30, 50, 1.31}, {1.32, 8, 1.32}};
  const auto merged = MergeBursts(in, 0.05);
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_DOUBLE_EQ(merged[0].start_s, 1.00);
  EXPECT_DOUBLE_EQ(merged[0].end_s, 1.05);
  EXPECT_EQ(merged[0].bytes, 300u);
  EXPECT_EQ(merged[1].bytes, 58u);
  EXPECT_EQ(MergeBursts(in, 0).size(), 4u);
}

// A shaped link: each step's exchange arrives in 2-6 pieces of random size
// separated by 20-45 ms stalls (TCP waiting for its window), between small
// requests; one step every ~0.62 s. Joined over 50-100 ms silences the
// pieces are one burst per step again.
TEST(EstimatePeriodAtAnyScale, ExchangeSplitByAShapedLink) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> pieces(2, 6);
  std::uniform_real_distribution<double> stall(0.02, 0.045), size(0.1, 1.0),
      jitter(-0.02, 0.02);
  std::vector<BurstPoint> bursts;
  double t = 50;
  for (int step = 0; step < 60; ++step) {
    bursts.push_back({t, 8, t});  // the request
    double at = t + stall(rng);
    for (int p = pieces(rng); p > 0; --p) {
      const double len = 0.03 * size(rng);
      bursts.push_back(
          {at, static_cast<uint64_t>(600000 * size(rng)), at + len});
      at += len + stall(rng);
    }
    t += 0.62 + jitter(rng);
  }
  const auto got = EstimatePeriodAtAnyScale(bursts);
  ASSERT_TRUE(got.has_value());
  EXPECT_NEAR(got->period_s, 0.62, 0.62 * 0.03);
}

// A worker on a contended node: each step starts when the last one ended
// (no clock holds the phase), and one step in five takes 1.6 to 2.2 times
// as long. The comb still lines most steps up but rounds each slow step to
// two cycles; on a train of whole exchanges the bursts are counted instead,
// so the rate is the steps taken over the time, as the pod's own count is.
TEST(EstimatePeriodAtAnyScale, SlowStepsOfWholeExchangesCountOnce) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> noise(0, 0.05);
    std::uniform_real_distribution<double> coin(0, 1), slow(1.6, 2.2);
    std::vector<BurstPoint> bursts;
    double t = 100;
    while (t < 130) {
      bursts.push_back({t, 8, t});  // the request
      bursts.push_back({t + 0.01, 2'000'000, t + 0.2});
      double step = 0.95 * (1 + noise(rng));
      if (coin(rng) < 0.2) step *= slow(rng);
      t += step;
    }
    const double first = bursts.front().start_s;
    const double last = bursts[bursts.size() - 2].start_s;
    const double true_period = (last - first) / (bursts.size() / 2 - 1);
    const auto got = EstimatePeriodAtAnyScale(bursts);
    ASSERT_TRUE(got.has_value()) << "seed " << seed;
    EXPECT_NEAR(got->period_s, true_period, 0.02 * true_period)
        << "seed " << seed;
    EXPECT_TRUE(got->whole_exchanges);
  }
}

// Real TF1 between-graph: each step a worker pushes its 262 kB of
// gradients to the PS and, apart from them, sends a 17 kB request and a
// 1 kB one. The push is the exchange; counting the side bursts' bytes as
// parts of a step read the worker 5-7% fast. The stream's bytes per step
// (for a later cut train) are all of them.
TEST(EstimatePeriodAtAnyScale, SideBurstsBesideWholeExchangesDoNotCount) {
  std::mt19937 rng(2);
  std::normal_distribution<double> noise(0, 0.003);
  std::vector<BurstPoint> bursts;
  for (int step = 0; step < 60; ++step) {
    const double t = 50 + step * 0.2 + noise(rng);
    bursts.push_back({t, 262'476, t + 0.002});
    bursts.push_back({t + 0.07, 17'483, t + 0.071});
    bursts.push_back({t + 0.13, 950, t + 0.131});
  }
  const auto got = EstimatePeriodAtAnyScale(bursts);
  ASSERT_TRUE(got.has_value());
  EXPECT_TRUE(got->whole_exchanges);
  EXPECT_NEAR(got->period_s, 0.2, 0.2 * 0.01);
  EXPECT_NEAR(got->step_bytes, 262'476 + 17'483 + 950, 3'000);
}

// A step's 400 kB gradient pushed as two equal bursts, the second 40 to
// 250 ms after the first, on 0.7 s steps (cluster-uplink-saturated's first
// seconds showed 200 kB pairs 55-70 ms apart): the silences fall in no two
// clear groups, so nothing joins the pairs, and one size carries all the
// bytes, as whole exchanges do. The comb lines up the pairs, not the
// bursts: two of them make a step.
TEST(EstimatePeriodAtAnyScale, EqualPiecesOfAStepCountOnce) {
  for (unsigned seed = 1; seed <= 8; ++seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<double> jitter(0, 0.02);
    std::uniform_real_distribution<double> second(0.04, 0.25);
    std::vector<BurstPoint> bursts;
    for (int step = 0; step < 40; ++step) {
      const double t = 20 + step * 0.7 + jitter(rng);
      bursts.push_back({t, 200'000, t + 0.01});
      const double t2 = t + second(rng);
      bursts.push_back({t2, 200'000, t2 + 0.01});
    }
    const auto got = EstimatePeriodAtAnyScale(bursts);
    ASSERT_TRUE(got.has_value()) << "seed " << seed;
    EXPECT_NEAR(got->period_s, 0.7, 0.7 * 0.03) << "seed " << seed;
    EXPECT_NEAR(got->step_bytes, 400'000, 400'000 * 0.03) << "seed " << seed;
  }
}

// Four workers contend for one PS: each pulls the same 600 kB every step,
// at a phase of its step that varies by a third of the step. No comb lines
// the pulls up; their bytes over the bytes of one step still count the
// steps.
TEST(EstimatePeriodByVolume, IrregularPhasesSameBytesPerStep) {
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> phase(0, 0.2);
  std::vector<BurstPoint> bursts;
  for (int step = 0; step < 50; ++step) {
    const double t = 10 + step * 0.6 + phase(rng);
    bursts.push_back({t, 600000, t + 0.05});
    bursts.push_back({t + 0.3, 16, t + 0.3});  // the gradient request
  }
  std::sort(bursts.begin(), bursts.end(),
            [](const BurstPoint& a, const BurstPoint& b) {
              return a.start_s < b.start_s;
            });
  const auto got = EstimatePeriodByVolume(bursts);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->method, PeriodEstimate::Method::kVolume);
  EXPECT_NEAR(got->period_s, 0.6, 0.6 * 0.02);
  const auto any = EstimatePeriodAtAnyScale(bursts);
  ASSERT_TRUE(any.has_value());
  EXPECT_NEAR(any->period_s, 0.6, 0.6 * 0.05);
}

// Sizes that change from step to step (no dominant size) give no volume
// estimate: the bytes of one step are unknown.
TEST(EstimatePeriodByVolume, NoDominantSize) {
  std::vector<BurstPoint> bursts;
  for (int step = 0; step < 40; ++step)
    bursts.push_back(
        {step * 0.5, 100000 + 20000 * static_cast<uint64_t>(step % 7)});
  EXPECT_FALSE(EstimatePeriodByVolume(bursts).has_value());
}

// An exchange that a stall split in two now and then counts as one step.
TEST(EstimatePeriodByVolume, SplitExchangesStillCountOnce) {
  std::vector<BurstPoint> bursts;
  for (int step = 0; step < 40; ++step) {
    const double t = step * 0.5;
    if (step % 5 == 2) {
      bursts.push_back({t, 300000, t + 0.02});
      bursts.push_back({t + 0.1, 300000, t + 0.12});
    } else {
      bursts.push_back({t, 600000, t + 0.05});
    }
  }
  const auto got = EstimatePeriodByVolume(bursts);
  ASSERT_TRUE(got.has_value());
  EXPECT_NEAR(got->period_s, 0.5, 0.5 * 0.02);
}

// A ring whose slowest rank runs 5 ms per 100 ms CFS period (a CPU quota
// of 0.05 cores): the gradients of a step (2.8 MB, ready every 0.23 s) move
// only while it runs, 1 to 7 chunks of 350 kB per period (as measured on
// real PyTorch DDP over gloo). The bursts make a clean comb at 100 ms with
// a varying part of a step in each tooth; the bytes over the step's size
// count the steps.
std::vector<BurstPoint> ThrottledRing(double step_s, double until_s) {
  constexpr double kStepBytes = 2'800'000, kChunk = 350'000, kCfs = 0.1;
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> chunks(1, 7);
  std::vector<BurstPoint> bursts;
  double pending = 0, next_step = 0;
  for (double tooth = 0; tooth < until_s; tooth += kCfs) {
    for (; next_step <= tooth; next_step += step_s) pending += kStepBytes;
    const double sent = std::min(pending, chunks(rng) * kChunk);
    pending -= sent;
    if (sent > 0)
      bursts.push_back({tooth, static_cast<uint64_t>(sent), tooth + 0.005});
  }
  return bursts;
}

TEST(EstimatePeriodByStepBytes, CountsTheStepsOfACombAtAnotherRhythm) {
  const std::vector<BurstPoint> bursts = ThrottledRing(0.23, 30);
  const auto comb = EstimatePeriodAtAnyScale(bursts);
  ASSERT_TRUE(comb.has_value());
  EXPECT_NEAR(comb->period_s, 0.1, 0.005);  // the quota's rhythm
  EXPECT_FALSE(comb->whole_exchanges);
  const auto got = EstimatePeriodByStepBytes(bursts, 2'800'000);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->method, PeriodEstimate::Method::kStepBytes);
  EXPECT_NEAR(got->period_s, 0.23, 0.23 * 0.02);
}

TEST(EstimatePeriodByStepBytes, NoneWithoutASizeOrEnoughSteps) {
  const std::vector<BurstPoint> bursts = ThrottledRing(0.23, 30);
  EXPECT_FALSE(EstimatePeriodByStepBytes(bursts, 0).has_value());
  EXPECT_FALSE(EstimatePeriodByStepBytes(ThrottledRing(0.23, 0.5), 2'800'000)
                   .has_value());
  EXPECT_FALSE(EstimatePeriodByStepBytes({}, 2'800'000).has_value());
}

// A ring allreduce rank sends 2(N-1) = 6 equal chunks to its neighbour per
// step, each after receiving one (a few ms of silence), then computes for
// 0.4 s. As they come the chunks show six times the step rate; joined over
// the natural gap between the two groups of silences, one burst per step.
TEST(EstimatePeriodAtAnyScale, RingAllreduceChunksAreOneStep) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> wait(0.004, 0.015), noise(0, 0.03);
  std::vector<BurstPoint> bursts;
  double t = 20;
  for (int step = 0; step < 40; ++step) {
    double at = t;
    for (int c = 0; c < 6; ++c) {
      bursts.push_back({at, 250000, at + 0.01});
      at += 0.01 + wait(rng);
    }
    t = at + 0.4 + noise(rng);
  }
  const double period = (t - 20) / 40;
  const auto gap = NaturalMergeGap(bursts);
  ASSERT_TRUE(gap.has_value());
  EXPECT_GT(*gap, 0.015);
  EXPECT_LT(*gap, 0.4);
  const auto got = EstimatePeriodAtAnyScale(bursts);
  ASSERT_TRUE(got.has_value());
  EXPECT_NEAR(got->period_s, period, period * 0.03);
}

TEST(NaturalMergeGap, NoneWhenTheSilencesAreOneGroup) {
  std::vector<BurstPoint> bursts;
  for (int step = 0; step < 40; ++step)
    bursts.push_back(
        {step * 0.1, 1000, step * 0.1 + 0.05 + 0.001 * (step % 3)});
  EXPECT_FALSE(NaturalMergeGap(bursts).has_value());
}

TEST(EstimatePeriod, EmptyAndTinyInputs) {
  EXPECT_FALSE(EstimatePeriod({}).has_value());
  std::vector<BurstPoint> two = {{1, 10}, {2, 10}};
  EXPECT_FALSE(EstimatePeriod(two).has_value());
  std::vector<BurstPoint> same_time(10, BurstPoint{5, 10});
  EXPECT_FALSE(EstimatePeriod(same_time).has_value());
}

}  // namespace
}  // namespace trainscope
