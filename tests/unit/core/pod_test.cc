#include "trainscope/pod.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

TEST(RoleTest, ParsesKubeflowReplicaTypesCaseInsensitively) {
  struct Case {
    const char* text;
    std::optional<Role> want;
  } cases[] = {
      {"ps", Role::kPs},
      {"PS", Role::kPs},
      {"Worker", Role::kWorker},
      {"chief", Role::kChief},
      {"Master", Role::kMaster},
      {"evaluator", Role::kEvaluator},
      {"parameter_server", Role::kPs},
      {"launcher", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ParseRole(c.text), c.want) << c.text;
  }
}

TEST(RoleTest, NamesRoundTrip) {
  for (Role r : {Role::kPs, Role::kWorker, Role::kChief, Role::kMaster,
                 Role::kEvaluator}) {
    EXPECT_EQ(ParseRole(RoleName(r)), r);
  }
  EXPECT_EQ(RoleName(Role::kUnknown), "");
}

TEST(PodTableTest, ReplaceBumpsGenerationAndKeepsOldSnapshotsAlive) {
  PodTable table;
  EXPECT_EQ(table.generation(), 0u);
  EXPECT_TRUE(table.Get()->empty());
  PodInfo pod;
  pod.name = "a";
  table.Replace({pod});
  auto first = table.Get();
  table.Replace({});
  EXPECT_EQ(table.generation(), 2u);
  ASSERT_EQ(first->size(), 1u);  // readers keep what they took
  EXPECT_EQ((*first)[0].name, "a");
  EXPECT_TRUE(table.Get()->empty());
}

}  // namespace
}  // namespace trainscope
