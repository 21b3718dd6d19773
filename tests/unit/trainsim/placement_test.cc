#include "placement.h"

#include <gtest/gtest.h>

namespace trainsim {
namespace {

struct Case {
  std::string name;
  Strategy strategy;
  int ps;
  std::vector<uint64_t> variables;
  std::vector<uint64_t> bytes_per_ps;
  int shards = 0;
  uint64_t min_slice = 262144;
};

TEST(PlacementTest, BytesPerPs) {
  const std::vector<Case> cases = {
      // The field story: one big embedding lands on PS 0 with round robin.
      {"rr embedding",
       Strategy::kRoundRobin,
       4,
       {3000000, 100000, 100000, 100000, 100000, 100000, 100000, 100000,
        100000},
       {3200000, 200000, 200000, 200000}},
      {"rr fewer vars than ps",
       Strategy::kRoundRobin,
       3,
       {10, 20},
       {10, 20, 0}},
      {"rr one ps", Strategy::kRoundRobin, 1, {10, 20, 30}, {60}},
      {"greedy", Strategy::kGreedy, 3, {100, 50, 50, 30, 30}, {100, 80, 80}},
      {"greedy tie lowest index", Strategy::kGreedy, 2, {5, 5, 5}, {10, 5}},
      {"greedy embedding",
       Strategy::kGreedy,
       4,
       {3000000, 100000, 100000, 100000, 100000, 100000, 100000, 100000,
        100000},
       {3000000, 300000, 300000, 200000}},
      // 3 MB over 4 shards; the dense variables stay whole and continue
      // the round robin after the 4 shards.
      {"partitioned embedding",
       Strategy::kPartitioned,
       4,
       {3000000, 100000, 100000, 100000, 100000, 100000, 100000, 100000,
        100000},
       {950000, 950000, 950000, 950000}},
      {"partitioned uneven split",
       Strategy::kPartitioned,
       3,
       {1000001},
       {333334, 333334, 333333},
       0,
       1000},
      {"partitioned small stays whole",
       Strategy::kPartitioned,
       2,
       {262144, 262145},
       {262144 + 131072, 131073}},
      {"partitioned shards",
       Strategy::kPartitioned,
       4,
       {4000},
       {2000, 2000, 0, 0},
       2,
       100},
      {"partitioned one shard",
       Strategy::kPartitioned,
       2,
       {4000, 10},
       {4000, 10},
       1,
       100},
      {"no variables", Strategy::kRoundRobin, 2, {}, {0, 0}},
  };
  for (const Case& c : cases) {
    Job job;
    job.ps = c.ps;
    job.placement.strategy = c.strategy;
    job.placement.shards = c.shards;
    job.placement.min_slice_bytes = c.min_slice;
    for (size_t i = 0; i < c.variables.size(); ++i)
      job.variables.push_back({"v" + std::to_string(i), c.variables[i]});
    auto slices = PlaceVariables(job);
    EXPECT_EQ(BytesPerPs(job, slices), c.bytes_per_ps) << c.name;
    uint64_t total = 0, placed = 0;
    for (uint64_t v : c.variables) total += v;
    for (const Slice& s : slices) placed += s.bytes;
    EXPECT_EQ(total, placed) << c.name << ": bytes lost or invented";
  }
}

TEST(PlacementTest, ShardNames) {
  Job job;
  job.ps = 2;
  job.placement.strategy = Strategy::kPartitioned;
  job.variables = {{"embedding", 600000}, {"dense", 10}};
  auto slices = PlaceVariables(job);
  ASSERT_EQ(slices.size(), 3u);
  EXPECT_EQ(slices[0].name, "embedding/part_0");
  EXPECT_EQ(slices[1].name, "embedding/part_1");
  EXPECT_EQ(slices[1].ps, 1);
  EXPECT_EQ(slices[2].name, "dense");
  EXPECT_EQ(slices[2].ps, 0);
}

}  // namespace
}  // namespace trainsim
