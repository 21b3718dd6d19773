#include "trainscope/log_limiter.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

using std::chrono::seconds;

TEST(LogLimiterTest, FirstOccurrenceThenOneLinePerIntervalWithCount) {
  LogLimiter limiter(seconds(60));
  const auto t0 = LogLimiter::Clock::time_point{} + seconds(1000);
  EXPECT_EQ(limiter.Pass("pods", "pod file broken", t0), "pod file broken");
  // A 5 s cycle for a minute: held back.
  for (int i = 1; i < 12; ++i) {
    EXPECT_FALSE(limiter.Pass("pods", "pod file broken", t0 + seconds(5 * i)))
        << i;
  }
  EXPECT_EQ(limiter.Pass("pods", "pod file broken", t0 + seconds(60)),
            "pod file broken (11 repeats not logged in the last 1m)");
  EXPECT_FALSE(limiter.Pass("pods", "pod file broken", t0 + seconds(65)));
}

TEST(LogLimiterTest, KeysAreIndependent) {
  LogLimiter limiter(seconds(60));
  const auto t0 = LogLimiter::Clock::time_point{} + seconds(1000);
  EXPECT_TRUE(limiter.Pass("a", "x", t0));
  EXPECT_TRUE(limiter.Pass("b", "y", t0));
  EXPECT_FALSE(limiter.Pass("a", "x", t0 + seconds(1)));
}

TEST(LogLimiterTest, ClearLogsTheNextFailureAtOnce) {
  LogLimiter limiter(seconds(300));
  const auto t0 = LogLimiter::Clock::time_point{} + seconds(1000);
  EXPECT_TRUE(limiter.Pass("api", "down", t0));
  EXPECT_FALSE(limiter.Pass("api", "down", t0 + seconds(5)));
  EXPECT_TRUE(limiter.Clear("api"));
  EXPECT_FALSE(limiter.Clear("api"));
  EXPECT_EQ(limiter.Pass("api", "down again", t0 + seconds(10)), "down again");
}

TEST(LogLimiterTest, SingleRepeatIsSingular) {
  LogLimiter limiter(seconds(30));
  const auto t0 = LogLimiter::Clock::time_point{} + seconds(1000);
  limiter.Pass("k", "m", t0);
  limiter.Pass("k", "m", t0 + seconds(1));
  EXPECT_EQ(limiter.Pass("k", "m", t0 + seconds(31)),
            "m (1 repeat not logged in the last 30s)");
}

TEST(LogLimiterTest, ClearAllForgetsEveryKey) {
  LogLimiter limiter(std::chrono::seconds(300));
  const auto t0 = LogLimiter::Clock::time_point{} + std::chrono::seconds(1000);
  limiter.Pass("a", "x", t0);
  limiter.Pass("b", "y", t0);
  limiter.ClearAll();
  EXPECT_TRUE(limiter.Pass("a", "x", t0 + std::chrono::seconds(1)));
  EXPECT_TRUE(limiter.Pass("b", "y", t0 + std::chrono::seconds(1)));
}

TEST(LogLimiterTest, MemoryIsBounded) {
  LogLimiter limiter(std::chrono::seconds(300));
  const auto t0 = LogLimiter::Clock::time_point{} + std::chrono::seconds(1000);
  for (size_t i = 0; i < LogLimiter::kMaxKeys; ++i) {
    limiter.Pass("k" + std::to_string(i), "m", t0);
  }
  EXPECT_FALSE(limiter.Pass("k0", "m", t0));  // remembered
  limiter.Pass("one-more", "m", t0);          // starts over
  EXPECT_TRUE(limiter.Pass("k0", "m", t0));
}

TEST(ShortDurationTest, NamesWholeUnits) {
  EXPECT_EQ(ShortDuration(std::chrono::minutes(5)), "5m");
  EXPECT_EQ(ShortDuration(std::chrono::hours(2)), "2h");
  EXPECT_EQ(ShortDuration(seconds(90)), "90s");
}

}  // namespace
}  // namespace trainscope
