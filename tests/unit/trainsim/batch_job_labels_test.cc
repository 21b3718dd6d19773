// trainsim's JobSet and Volcano label styles read back by the agent's own
// discovery: each pod gets the role, rank, job and job kind a v1 operator's
// pod of the same job gets.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "discovery/pod_json.h"
#include "discovery/roles.h"
#include "layout.h"
#include "pod_env.h"
#include "pod_json.h"
#include "scenario.h"

namespace trainsim {
namespace {

using nlohmann::json;

trainscope::PodInfo Discovered(const Layout& layout, const SimPod& pod) {
  trainscope::PodInfo info;
  EXPECT_TRUE(
      trainscope::ParsePod(PodJson(layout, pod, {}, "1", "x"), &info).ok());
  trainscope::ApplyTrainingIdentity(trainscope::DefaultLabelSchemes(), &info);
  return info;
}

// A layout's pods point into its scenario's jobs: both live here.
struct SimRun {
  std::unique_ptr<Scenario> scenario;
  Layout layout;
};

SimRun Make(const std::string& kind, const std::string& labels) {
  const std::string counts =
      kind == "allreduce"
          ? R"("workers": 4, "chief": 1, "gradient_bytes": 1000)"
          : R"("ps": 2, "workers": 3)";
  auto scenario = std::make_unique<Scenario>(ParseScenarioText(
      R"({"name": "t", "jobs": [{"name": "ctr", "namespace": "training",
      "kind": ")" +
      kind + R"(", "labels": ")" + labels + R"(", )" + counts +
      R"(, "port": 2222}]})"));
  Layout layout = MakeLayout(*scenario, "0a1b2c3d");
  return {std::move(scenario), std::move(layout)};
}

TEST(BatchJobLabelsTest, PsJobsReadAsTheirOperatorsPods) {
  for (const char* style : {"jobset", "volcano"}) {
    const SimRun run = Make("ps_async", style);
    const Layout& layout = run.layout;
    for (const SimPod& pod : layout.pods) {
      const trainscope::PodInfo info = Discovered(layout, pod);
      EXPECT_EQ(info.training_job, "ctr") << style << " " << pod.name;
      EXPECT_EQ(info.role, pod.role == PodRole::kPs ? trainscope::Role::kPs
                                                    : trainscope::Role::kWorker)
          << style << " " << pod.name;
      EXPECT_EQ(info.replica_index, pod.index) << style << " " << pod.name;
      EXPECT_EQ(info.job_kind, std::string(style) == "jobset"
                                   ? trainscope::JobKind::kJobSet
                                   : trainscope::JobKind::kVolcanoJob)
          << style << " " << pod.name;
    }
  }
}

// The Kubeflow Trainer runs every rank in its `node` replicated job, the
// rank being the completion index; Volcano's PyTorch tasks are master and
// worker, as in a v1 PyTorchJob.
TEST(BatchJobLabelsTest, AllreduceRanksKeepTheirOrder) {
  const SimRun trainer_run = Make("allreduce", "jobset");
  const Layout& trainer = trainer_run.layout;
  std::vector<int> ranks;
  for (const SimPod& pod : trainer.pods) {
    const trainscope::PodInfo info = Discovered(trainer, pod);
    EXPECT_EQ(info.role, trainscope::Role::kWorker) << pod.name;
    EXPECT_EQ(info.job_kind, trainscope::JobKind::kTrainJob) << pod.name;
    EXPECT_EQ(info.replica_index, AllreduceRank(pod)) << pod.name;
    ranks.push_back(info.replica_index);
  }
  std::sort(ranks.begin(), ranks.end());
  EXPECT_EQ(ranks, (std::vector<int>{0, 1, 2, 3, 4}));

  const SimRun volcano_run = Make("allreduce", "volcano");
  const Layout& volcano = volcano_run.layout;
  for (const SimPod& pod : volcano.pods) {
    const trainscope::PodInfo info = Discovered(volcano, pod);
    EXPECT_EQ(info.role, pod.role == PodRole::kMaster
                             ? trainscope::Role::kMaster
                             : trainscope::Role::kWorker)
        << pod.name;
    EXPECT_EQ(info.replica_index, pod.index) << pod.name;
    EXPECT_EQ(info.job_kind, trainscope::JobKind::kVolcanoJob) << pod.name;
  }
}

}  // namespace
}  // namespace trainsim
