#include "diagnosis/window.h"

#include <gtest/gtest.h>

#include "synthetic.h"

namespace trainscope::diagnosis {
namespace {

PodPoint At(double t, std::optional<double> v, std::string instance = "a") {
  PodPoint p;
  p.t = t;
  p.instance = std::move(instance);
  p.io_read_bytes = v;
  return p;
}

struct RateCase {
  const char* name;
  std::vector<PodPoint> points;
  std::optional<double> rate;
};

class CounterRateTest : public ::testing::TestWithParam<RateCase> {};

TEST_P(CounterRateTest, Rate) {
  auto got = CounterRate(GetParam().points, &PodPoint::io_read_bytes);
  ASSERT_EQ(got.has_value(), GetParam().rate.has_value());
  if (got) {
    EXPECT_NEAR(*got, *GetParam().rate, 1e-9);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, CounterRateTest,
    ::testing::Values(
        RateCase{"steady", {At(0, 100), At(5, 600), At(10, 1100)}, 100},
        RateCase{"single_point", {At(0, 100)}, std::nullopt},
        RateCase{"empty", {}, std::nullopt},
        // A missing value is bridged: 1000 bytes over 10 s.
        RateCase{"missing_value",
                 {At(0, 100), At(5, std::nullopt), At(10, 1100)},
                 100},
        // Counter reset (went down): that interval counts neither bytes nor
        // time; 500 bytes over 5 s + 100 over 5 s.
        RateCase{"counter_reset",
                 {At(0, 100), At(5, 600), At(10, 50), At(15, 550)},
                 (500.0 + 500.0) / 10},
        // Restart with a new instance: counter restarts even if higher.
        RateCase{"restart_new_instance",
                 {At(0, 100), At(5, 600), At(10, 5000, "b"), At(15, 5500, "b")},
                 1000.0 / 10},
        RateCase{"only_reset", {At(0, 600), At(5, 100)}, std::nullopt},
        RateCase{"flat", {At(0, 100), At(5, 100)}, 0}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(WindowTest, LatePodGetsRateOverItsOwnSpan) {
  auto w = testing::WindowBuilder(4)
               .Pod("late", Role::kWorker)
               .Counter(&PodPoint::cpu_usage_seconds, 0.5)
               .DropPoint(0)
               .DropPoint(0)
               .Build();
  auto stats = ComputeStats(w);
  const auto& s = stats.pods.at(testing::Key("late"));
  ASSERT_TRUE(s.cpu_cores);
  EXPECT_NEAR(*s.cpu_cores, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(s.span_seconds, 5);
}

TEST(WindowTest, ThrottledRatioAndLimitsFallBackToSpec) {
  testing::WindowBuilder b;
  b.Pod("ps-0", Role::kPs)
      .Counter(&PodPoint::cpu_periods, 10)
      .Counter(&PodPoint::cpu_throttled_periods, 3);
  b.Meta().spec_cpu_limit_cores = 2;
  b.Meta().spec_memory_limit_bytes = 1e9;
  auto s = ComputeStats(b.Build()).pods.at(testing::Key("ps-0"));
  ASSERT_TRUE(s.throttled_ratio);
  EXPECT_NEAR(*s.throttled_ratio, 0.3, 1e-9);
  EXPECT_EQ(s.cpu_limit_cores, 2);
  EXPECT_EQ(s.memory_limit_bytes, 1e9);
}

TEST(WindowTest, NodeLinkRatesAndSpeed) {
  testing::WindowBuilder b;
  b.Node(4, 125e6).NodeTraffic(10e6, 20e6).Pod("w", Role::kWorker);
  auto s = ComputeStats(b.Build()).pods.at(testing::Key("w"));
  EXPECT_EQ(s.node_nic_speed_bytes_per_second, 125e6);
  EXPECT_NEAR(*s.node_receive_bytes_per_second, 10e6, 1e-6);
  EXPECT_NEAR(*s.node_transmit_bytes_per_second, 20e6, 1e-6);
  EXPECT_EQ(s.node_cpu_count, 4);
  auto tail = Tail(b.Build(), 2);
  EXPECT_EQ(tail.node_points.at("node-a").size(), 2u);
}

TEST(WindowTest, TailKeepsTheLastInstants) {
  auto w = testing::WindowBuilder(6)
               .Pod("a", Role::kWorker)
               .Counter(&PodPoint::cpu_usage_seconds, 1)
               .Build();
  auto tail = Tail(w, 3);
  ASSERT_EQ(tail.pods.at(testing::Key("a")).points.size(), 3u);
  EXPECT_EQ(tail.pods.at(testing::Key("a")).points.front().t, 15);
}

}  // namespace
}  // namespace trainscope::diagnosis
