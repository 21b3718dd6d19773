#include "stats.h"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

namespace trainsim {
namespace {

TEST(StatsTest, RoundTripAndConsistency) {
  const std::string dir = ::testing::TempDir() + "/trainsim-stats";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  PodStats ps("ps-0", "ps", {"w-0", "w-1"});
  PodStats w0("w-0", "worker", {"ps-0"});
  EXPECT_EQ(ps.Peer("stranger"), nullptr);
  ps.Peer("w-0")->tx_bytes = 100;
  ps.Peer("w-0")->rx_bytes = 40;
  w0.Peer("ps-0")->tx_bytes = 40;
  w0.Peer("ps-0")->rx_bytes = 100;
  w0.steps() = 3;
  ps.WriteFile(dir + "/ps-0.json");
  w0.WriteFile(dir + "/w-0.json");
  std::map<std::string, uint64_t> steps;
  GroundTruth t = ReadGroundTruth(dir, &steps);
  EXPECT_EQ(t["ps-0"]["w-0"].tx, 100u);
  EXPECT_EQ(t["w-0"]["ps-0"].rx, 100u);
  EXPECT_EQ(steps["w-0"], 3u);
  EXPECT_FALSE(t["ps-0"].count("w-1"));  // idle peers are left out
  EXPECT_TRUE(Inconsistencies(t).empty());
  t["w-0"]["ps-0"].rx = 99;
  auto bad = Inconsistencies(t);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0], "ps-0->w-0: ps-0 sent 100, w-0 received 99");
  std::filesystem::remove_all(dir);
}

// Steps carry the time of the last one, so rates come from completions.
TEST(StatsTest, StepCountsCarryTheLastStepsTime) {
  const std::string dir = ::testing::TempDir() + "/trainsim-steps";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  PodStats w0("w-0", "worker", {"ps-0"});
  PodStats ps("ps-0", "ps", {"w-0"});
  const double before = std::chrono::duration<double>(
                            std::chrono::system_clock::now().time_since_epoch())
                            .count();
  w0.CountStep();
  w0.CountStep();
  w0.WriteFile(dir + "/w-0.json");
  ps.WriteFile(dir + "/ps-0.json");
  auto counts = ReadStepCounts(dir);
  ASSERT_EQ(counts.size(), 2u);
  EXPECT_EQ(counts["w-0"].steps, 2u);
  EXPECT_GE(counts["w-0"].last_step_epoch_s, before);
  EXPECT_LT(counts["w-0"].last_step_epoch_s, before + 60);
  EXPECT_EQ(counts["ps-0"].steps, 0u);
  EXPECT_EQ(counts["ps-0"].last_step_epoch_s, 0);  // no step: unknown
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainsim
