#include "discovery/roles.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

struct IdentityCase {
  std::string what;
  std::string pod_name;
  std::map<std::string, std::string> labels;
  std::string tf_config;
  std::string job;
  Role role;
  int index;
  std::string source;
};

TEST(InferTrainingIdentityTest, Table) {
  const std::string kTfWorker3 =
      R"({"cluster":{"ps":["ctr-ps-0.ctr-ps:2222"],"worker":["ctr-worker-0:2222",
      "ctr-worker-1:2222","ctr-worker-2:2222","ctr-worker-3.ctr-worker.training.svc:2222"]},
      "task":{"type":"worker","index":3}})";
  const IdentityCase cases[] = {
      {"kubeflow labels",
       "pod-x",
       {{"training.kubeflow.org/job-name", "mnist"},
        {"training.kubeflow.org/replica-type", "ps"},
        {"training.kubeflow.org/replica-index", "1"}},
       "",
       "mnist",
       Role::kPs,
       1,
       "labels:training.kubeflow.org/replica-type"},
      {"kubeflow replica type in capitals (TFJob spec spelling)",
       "pod-x",
       {{"training.kubeflow.org/job-name", "mnist"},
        {"training.kubeflow.org/replica-type", "Worker"},
        {"training.kubeflow.org/replica-index", "0"}},
       "",
       "mnist",
       Role::kWorker,
       0,
       "labels:training.kubeflow.org/replica-type"},
      {"kubeflow beats the name pattern",
       "other-ps-7",
       {{"training.kubeflow.org/job-name", "mnist"},
        {"training.kubeflow.org/replica-type", "chief"},
        {"training.kubeflow.org/replica-index", "0"}},
       "",
       "mnist",
       Role::kChief,
       0,
       "labels:training.kubeflow.org/replica-type"},
      {"kubeflow beats seed labels",
       "p",
       {{"training.kubeflow.org/job-name", "kf"},
        {"training.kubeflow.org/replica-type", "ps"},
        {"training.kubeflow.org/replica-index", "2"},
        {"name", "seed"},
        {"job", "worker"},
        {"task", "5"}},
       "",
       "kf",
       Role::kPs,
       2,
       "labels:training.kubeflow.org/replica-type"},
      {"old tf-operator with tf-job-name",
       "p",
       {{"tf-job-name", "old"},
        {"tf-replica-type", "PS"},
        {"tf-replica-index", "4"}},
       "",
       "old",
       Role::kPs,
       4,
       "labels:tf-replica-type"},
      {"old tf-operator with job-name",
       "p",
       {{"job-name", "older"},
        {"tf-replica-type", "worker"},
        {"tf-replica-index", "9"}},
       "",
       "older",
       Role::kWorker,
       9,
       "labels:tf-replica-type"},
      {"seed labels",
       "p",
       {{"name", "ctr"}, {"job", "ps"}, {"task", "3"}},
       "",
       "ctr",
       Role::kPs,
       3,
       "labels:job"},
      {"a lone name label is not a training job",
       "web-7d9f",
       {{"name", "web"}},
       "",
       "",
       Role::kUnknown,
       -1,
       ""},
      {"seed role label with a non-role value falls through to the name",
       "ctr-worker-2",
       {{"name", "ctr"}, {"job", "batch"}, {"task", "1"}},
       "",
       "ctr",
       Role::kWorker,
       2,
       "name"},
      {"non-numeric index is unknown",
       "p",
       {{"name", "ctr"}, {"job", "worker"}, {"task", "one"}},
       "",
       "ctr",
       Role::kWorker,
       -1,
       "labels:job"},
      {"negative index is unknown",
       "p",
       {{"name", "ctr"}, {"job", "worker"}, {"task", "-1"}},
       "",
       "ctr",
       Role::kWorker,
       -1,
       "labels:job"},
      {"missing index filled from the name when the role agrees",
       "ctr-worker-6",
       {{"tf-job-name", "ctr"}, {"tf-replica-type", "worker"}},
       "",
       "ctr",
       Role::kWorker,
       6,
       "labels:tf-replica-type"},
      {"missing index not filled from a name with another role",
       "ctr-ps-6",
       {{"tf-job-name", "ctr"}, {"tf-replica-type", "worker"}},
       "",
       "ctr",
       Role::kWorker,
       -1,
       "labels:tf-replica-type"},
      {"TF_CONFIG with job from the pod name",
       "ctr-worker-3",
       {},
       kTfWorker3,
       "ctr",
       Role::kWorker,
       3,
       "tf_config"},
      {"TF_CONFIG with job from the cluster spec host",
       "random-pod-name",
       {},
       kTfWorker3,
       "ctr",
       Role::kWorker,
       3,
       "tf_config"},
      {"TF_CONFIG beats the name pattern",
       "zzz-ps-0",
       {},
       R"({"task":{"type":"chief","index":0}})",
       "zzz",
       Role::kChief,
       0,
       "tf_config"},
      {"TF_CONFIG with index as text",
       "x",
       {},
       R"({"task":{"type":"evaluator","index":"0"}})",
       "",
       Role::kEvaluator,
       0,
       "tf_config"},
      {"bad TF_CONFIG falls through to the name",
       "ctr-ps-1",
       {},
       R"({"task":{"type":"ps",)",
       "ctr",
       Role::kPs,
       1,
       "name"},
      {"TF_CONFIG with unknown task type falls through",
       "plain",
       {},
       R"({"task":{"type":"driver","index":0}})",
       "",
       Role::kUnknown,
       -1,
       ""},
      {"labels beat TF_CONFIG",
       "p",
       {{"name", "seed"}, {"job", "ps"}, {"task", "0"}},
       kTfWorker3,
       "seed",
       Role::kPs,
       0,
       "labels:job"},
      {"name pattern", "ctr-ps-0", {}, "", "ctr", Role::kPs, 0, "name"},
      {"name pattern with dashes in the job",
       "my-big-job-worker-12",
       {},
       "",
       "my-big-job",
       Role::kWorker,
       12,
       "name"},
      {"name pattern with a Job pod suffix",
       "ctr-worker-3-x7k2p",
       {},
       "",
       "ctr",
       Role::kWorker,
       3,
       "name"},
      {"name pattern with a Deployment pod suffix",
       "ctr-ps-0-7d9f8b6c5-x2k4q",
       {},
       "",
       "ctr",
       Role::kPs,
       0,
       "name"},
      {"name pattern in capitals",
       "ctr-Master-0",
       {},
       "",
       "ctr",
       Role::kMaster,
       0,
       "name"},
      {"no job before the role",
       "worker-3",
       {},
       "",
       "",
       Role::kUnknown,
       -1,
       ""},
      {"non-numeric index in the name",
       "ctr-worker-x",
       {},
       "",
       "",
       Role::kUnknown,
       -1,
       ""},
      {"ordinary pod",
       "coredns-5d78c9869d-abcde",
       {},
       "",
       "",
       Role::kUnknown,
       -1,
       ""},
  };
  const auto schemes = DefaultLabelSchemes();
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    PodInfo pod;
    pod.name = c.pod_name;
    pod.labels = c.labels;
    pod.tf_config = c.tf_config;
    TrainingIdentity id = InferTrainingIdentity(pod, schemes);
    EXPECT_EQ(id.job, c.job);
    EXPECT_EQ(id.role, c.role);
    EXPECT_EQ(id.index, c.index);
    EXPECT_EQ(id.source, c.source);
    ApplyTrainingIdentity(schemes, &pod);
    EXPECT_EQ(pod.training_job, c.job);
    EXPECT_EQ(pod.role, c.role);
    EXPECT_EQ(pod.replica_index, c.index);
  }
}

TEST(InferTrainingIdentityTest, CustomSchemes) {
  std::vector<LabelScheme> schemes;
  ASSERT_TRUE(ParseLabelSchemes("team/job,team/role,team/rank", &schemes).ok());
  PodInfo pod;
  pod.name = "p";
  pod.labels = {{"team/job", "j"},
                {"team/role", "worker"},
                {"team/rank", "5"},
                {"training.kubeflow.org/replica-type", "ps"}};
  TrainingIdentity id = InferTrainingIdentity(pod, schemes);
  // Only the configured schemes count: the Kubeflow label is ignored.
  EXPECT_EQ(id.job, "j");
  EXPECT_EQ(id.role, Role::kWorker);
  EXPECT_EQ(id.index, 5);
}

TEST(ParseLabelSchemesTest, Table) {
  struct Case {
    std::string text;
    bool ok;
    std::vector<LabelScheme> want;
  } cases[] = {
      {"a,b,c", true, {{"a", "b", "c"}}},
      {" a , b , c ; d,e,f ;", true, {{"a", "b", "c"}, {"d", "e", "f"}}},
      {",role,", true, {{"", "role", ""}}},
      {"a,b", false, {}},
      {"a,,c", false, {}},
      {"a,b,c,d", false, {}},
      {"", false, {}},
      {";", false, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    std::vector<LabelScheme> got = {{"keep", "keep", "keep"}};
    Status st = ParseLabelSchemes(c.text, &got);
    ASSERT_EQ(st.ok(), c.ok) << st.message();
    if (c.ok) {
      EXPECT_EQ(got, c.want);
    } else {
      EXPECT_FALSE(st.message().empty());
      EXPECT_EQ(got.size(), 1u);  // untouched on error
    }
  }
}

TEST(ParseLabelSchemesTest, DefaultsRoundTrip) {
  std::string text;
  for (const auto& s : DefaultLabelSchemes()) {
    text += s.job_key + "," + s.role_key + "," + s.index_key + ";";
  }
  std::vector<LabelScheme> parsed;
  ASSERT_TRUE(ParseLabelSchemes(text, &parsed).ok());
  EXPECT_EQ(parsed, DefaultLabelSchemes());
}

TEST(PreparePodsForPublishTest, DropsFinishedSortsAndInfers) {
  PodList pods(4);
  pods[0].name = "z-worker-0";
  pods[0].namespace_name = "a";
  pods[0].phase = "Running";
  pods[1].name = "done-worker-1";
  pods[1].phase = "Succeeded";
  pods[2].name = "failed";
  pods[2].phase = "Failed";
  pods[3].name = "b-ps-0";
  pods[3].namespace_name = "a";
  pods[3].phase = "Pending";
  PodList out = PreparePodsForPublish(pods, DefaultLabelSchemes());
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].name, "b-ps-0");
  EXPECT_EQ(out[0].role, Role::kPs);
  EXPECT_EQ(out[1].name, "z-worker-0");
  EXPECT_EQ(out[1].training_job, "z");
}

}  // namespace
}  // namespace trainscope
