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
      {"Server", Role::kPs},  // MXJob's parameter server
      {"launcher", Role::kLauncher},
      {"Scheduler", Role::kScheduler},
      {"tunerserver", std::nullopt},
      {"driver", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ParseRole(c.text), c.want) << c.text;
  }
}

TEST(RoleTest, NamesRoundTrip) {
  for (Role r : {Role::kPs, Role::kWorker, Role::kChief, Role::kMaster,
                 Role::kEvaluator, Role::kLauncher, Role::kScheduler}) {
    EXPECT_EQ(ParseRole(RoleName(r)), r);
  }
  EXPECT_EQ(RoleName(Role::kUnknown), "");
}

TEST(JobKindTest, NamesRoundTrip) {
  for (JobKind k : {JobKind::kTFJob, JobKind::kPyTorchJob, JobKind::kMPIJob,
                    JobKind::kMXJob, JobKind::kXGBoostJob, JobKind::kPaddleJob,
                    JobKind::kJAXJob, JobKind::kTrainJob, JobKind::kJobSet,
                    JobKind::kVolcanoJob}) {
    EXPECT_EQ(ParseJobKind(JobKindName(k)), k);
  }
  EXPECT_EQ(ParseJobKind("pytorchjob"), JobKind::kPyTorchJob);
  EXPECT_EQ(ParseJobKind("Job"), std::nullopt);
  EXPECT_EQ(JobKindName(JobKind::kUnknown), "");
}

TEST(FrameworkTest, NamesRoundTrip) {
  for (Framework f :
       {Framework::kTensorFlow, Framework::kTensorFlow1,
        Framework::kTensorFlow2, Framework::kPyTorch, Framework::kMXNet}) {
    EXPECT_EQ(ParseFramework(FrameworkName(f)), f);
  }
  EXPECT_EQ(ParseFramework("tf2"), std::nullopt);
  EXPECT_TRUE(IsTensorFlow(Framework::kTensorFlow1));
  EXPECT_FALSE(IsTensorFlow(Framework::kPyTorch));
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
