// Roles, job kinds and frameworks of pods shaped exactly as each Kubeflow
// operator, JobSet / Kubeflow Trainer v2 and Volcano create them
// (tests/fixtures/operator-pods/README.md says where each shape comes from).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "discovery/batch_jobs.h"
#include "discovery/pod_json.h"
#include "discovery/roles.h"
#include "exposition/pod_filter.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;

PodList LoadFixture(const std::string& file) {
  const fs::path path = fs::path(TRAINSCOPE_SOURCE_DIR) / "tests" / "fixtures" /
                        "operator-pods" / file;
  std::ifstream in(path);
  std::stringstream body;
  body << in.rdbuf();
  PodList pods;
  std::string version;
  Status st = ParsePodList(body.str(), &pods, &version);
  EXPECT_TRUE(st.ok()) << path << ": " << st.message();
  return pods;
}

struct OperatorCase {
  std::string file;
  std::string pod;
  std::string job;
  Role role;
  int index;
  JobKind kind;
  Framework framework;
};

TEST(OperatorPodsTest, EveryJobKindsRoles) {
  using F = Framework;
  using K = JobKind;
  const OperatorCase cases[] = {
      // TFJob, TF 2 ParameterServerStrategy.
      {"tfjob-tf2.json", "mnist-chief-0", "mnist", Role::kChief, 0, K::kTFJob,
       F::kTensorFlow2},
      {"tfjob-tf2.json", "mnist-ps-1", "mnist", Role::kPs, 1, K::kTFJob,
       F::kTensorFlow2},
      {"tfjob-tf2.json", "mnist-worker-0", "mnist", Role::kWorker, 0, K::kTFJob,
       F::kTensorFlow2},
      {"tfjob-tf2.json", "mnist-evaluator-0", "mnist", Role::kEvaluator, 0,
       K::kTFJob, F::kTensorFlow2},
      // TFJob, TF 1 with a master task.
      {"tfjob-tf1.json", "ctr-master-0", "ctr", Role::kMaster, 0, K::kTFJob,
       F::kTensorFlow1},
      {"tfjob-tf1.json", "ctr-ps-0", "ctr", Role::kPs, 0, K::kTFJob,
       F::kTensorFlow1},
      // PyTorchJob.
      {"pytorchjob.json", "resnet-master-0", "resnet", Role::kMaster, 0,
       K::kPyTorchJob, F::kPyTorch},
      {"pytorchjob.json", "resnet-worker-1", "resnet", Role::kWorker, 1,
       K::kPyTorchJob, F::kPyTorch},
      // MPIJob of the training-operator: the launcher has no index.
      {"mpijob-training-operator.json", "horovod-launcher", "horovod",
       Role::kLauncher, -1, K::kMPIJob, F::kUnknown},
      {"mpijob-training-operator.json", "horovod-worker-1", "horovod",
       Role::kWorker, 1, K::kMPIJob, F::kUnknown},
      // MPIJob v2beta1 of mpi-operator: job-role, no replica-type. Horovod
      // over TF: the image names the framework, not its generation.
      {"mpijob-v2beta1.json", "bert-launcher-x7k2p", "bert", Role::kLauncher,
       -1, K::kMPIJob, F::kTensorFlow},
      {"mpijob-v2beta1.json", "bert-worker-1", "bert", Role::kWorker, 1,
       K::kMPIJob, F::kTensorFlow},
      // MXJob: the server is a parameter server.
      {"mxjob.json", "mxnet-job-scheduler-0", "mxnet-job", Role::kScheduler, 0,
       K::kMXJob, F::kMXNet},
      {"mxjob.json", "mxnet-job-server-0", "mxnet-job", Role::kPs, 0, K::kMXJob,
       F::kMXNet},
      {"mxjob.json", "mxnet-job-worker-0", "mxnet-job", Role::kWorker, 0,
       K::kMXJob, F::kMXNet},
      // Older operators.
      {"legacy-operators.json", "old-tf-worker-1", "old-tf", Role::kWorker, 1,
       K::kTFJob, F::kTensorFlow1},
      {"legacy-operators.json", "old-torch-master-0", "old-torch",
       Role::kMaster, 0, K::kPyTorchJob, F::kPyTorch},
      {"legacy-operators.json", "old-mpi-worker-3", "old-mpi", Role::kWorker, 3,
       K::kMPIJob, F::kUnknown},
      // Kubeflow Trainer v2 TrainJob (torch-distributed runtime): replicated
      // job `node`, rank = completion index, torchrun PET_* environment.
      {"trainjob.json", "llama-node-0-0-x7k2p", "llama", Role::kWorker, 0,
       K::kTrainJob, F::kPyTorch},
      {"trainjob.json", "llama-node-0-2-q4m8z", "llama", Role::kWorker, 2,
       K::kTrainJob, F::kPyTorch},
      // deepspeed-distributed runtime: its MPI launcher shows nothing of the
      // Trainer, so it is a JobSet's launcher.
      {"trainjob.json", "ds-launcher-0-0-b2c4d", "ds", Role::kLauncher, 0,
       K::kJobSet, F::kUnknown},
      {"trainjob.json", "ds-node-0-1-k9w3e", "ds", Role::kWorker, 1,
       K::kTrainJob, F::kUnknown},
      // Plain JobSet (JobSet's PyTorch example): plural `workers`, the rank
      // from the index label, or from the annotation before Kubernetes 1.28.
      {"jobset.json", "pytorch-workers-0-3-h5t7u", "pytorch", Role::kWorker, 3,
       K::kJobSet, F::kPyTorch},
      {"jobset.json", "pytorch-workers-0-0-a1b2c", "pytorch", Role::kWorker, 0,
       K::kJobSet, F::kPyTorch},
      // Three Jobs in one replicated job: the rank is not knowable.
      {"jobset.json", "multi-workers-2-0-n8m7l", "multi", Role::kWorker, -1,
       K::kJobSet, F::kUnknown},
      // A replicated job that names no role stays an ordinary pod.
      {"jobset.json", "tpu-driver-0-0-p0o9i", "", Role::kUnknown, -1,
       K::kUnknown, F::kUnknown},
      // Volcano Job (Volcano's TF dist-mnist and MPI examples); the old
      // mpiworker pod has its task index only as an annotation.
      {"volcano.json", "tensorflow-dist-mnist-ps-0", "tensorflow-dist-mnist",
       Role::kPs, 0, K::kVolcanoJob, F::kUnknown},
      {"volcano.json", "tensorflow-dist-mnist-worker-1",
       "tensorflow-dist-mnist", Role::kWorker, 1, K::kVolcanoJob, F::kUnknown},
      {"volcano.json", "lm-mpi-job-mpimaster-0", "lm-mpi-job", Role::kLauncher,
       0, K::kVolcanoJob, F::kUnknown},
      {"volcano.json", "lm-mpi-job-mpiworker-1", "lm-mpi-job", Role::kWorker, 1,
       K::kVolcanoJob, F::kUnknown},
  };
  std::map<std::string, PodList> files;
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file + " " + c.pod);
    if (!files.count(c.file)) files[c.file] = LoadFixture(c.file);
    const PodList published =
        PreparePodsForPublish(files[c.file], DefaultLabelSchemes());
    const PodInfo* pod = nullptr;
    for (const auto& p : published) {
      if (p.name == c.pod) pod = &p;
    }
    ASSERT_NE(pod, nullptr);
    EXPECT_EQ(pod->training_job, c.job);
    EXPECT_EQ(pod->role, c.role) << RoleName(pod->role);
    EXPECT_EQ(pod->replica_index, c.index);
    EXPECT_EQ(pod->job_kind, c.kind) << JobKindName(pod->job_kind);
    EXPECT_EQ(pod->framework, c.framework) << FrameworkName(pod->framework);
  }
}

// The environment alone names the role when labels are gone (a pod file, a
// custom --role-labels): MXNet's DMLC_ROLE, mpi-operator's K_MPI_JOB_ROLE.
TEST(OperatorPodsTest, EnvironmentWithoutLabels) {
  struct Case {
    std::string name;
    std::map<std::string, std::string> env;
    std::string job;
    Role role;
    JobKind kind;
    std::string source;
  } cases[] = {
      {"mx-server-2",
       {{"DMLC_ROLE", "server"}},
       "mx",
       Role::kPs,
       JobKind::kMXJob,
       "env:DMLC_ROLE"},
      {"mx-scheduler-0",
       {{"DMLC_ROLE", "scheduler"}},
       "mx",
       Role::kScheduler,
       JobKind::kMXJob,
       "env:DMLC_ROLE"},
      {"hvd-launcher-abcde",
       {{"K_MPI_JOB_ROLE", "launcher"}},
       "hvd",
       Role::kLauncher,
       JobKind::kMPIJob,
       "env:K_MPI_JOB_ROLE"},
      {"random",
       {{"DMLC_ROLE", "tuner"}},
       "",
       Role::kUnknown,
       JobKind::kUnknown,
       ""},
      // PyTorch env names no role; the name does, the env the kind.
      {"ddp-worker-3",
       {{"MASTER_ADDR", "ddp-master-0"}, {"WORLD_SIZE", "5"}, {"RANK", "4"}},
       "ddp",
       Role::kWorker,
       JobKind::kPyTorchJob,
       "name"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    PodInfo pod;
    pod.name = c.name;
    pod.training_env = c.env;
    TrainingIdentity id = InferTrainingIdentity(pod, {{"", "none", ""}});
    EXPECT_EQ(id.job, c.job);
    EXPECT_EQ(id.role, c.role);
    EXPECT_EQ(id.job_kind, c.kind);
    EXPECT_EQ(id.source, c.source);
  }
}

TEST(OperatorPodsTest, FrameworkAnnotationAndImages) {
  struct Case {
    std::string what;
    std::vector<std::string> images;
    std::map<std::string, std::string> annotations;
    std::map<std::string, std::string> labels;
    Framework want;
  } cases[] = {
      {"TF 2 image",
       {"tensorflow/tensorflow:2.15.0-gpu"},
       {},
       {},
       Framework::kTensorFlow2},
      {"TF 1 image with registry and digest",
       {"reg:5000/ml/tensorflow:1.14.0@sha256:ab"},
       {},
       {},
       Framework::kTensorFlow1},
      {"TF image of unknown generation",
       {"tensorflow/tensorflow:latest"},
       {},
       {},
       Framework::kTensorFlow},
      {"annotation beats the image",
       {"tensorflow/tensorflow:2.15.0"},
       {{"trainscope.io/framework", "tensorflow1"}},
       {},
       Framework::kTensorFlow1},
      {"bad annotation falls back to the image",
       {"pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime"},
       {{"trainscope.io/framework", "jax"}},
       {},
       Framework::kPyTorch},
      {"seed labels are TF 1 between-graph",
       {"python:3.11"},
       {},
       {{"name", "ctr"}, {"job", "ps"}, {"task", "0"}},
       Framework::kTensorFlow1},
      {"nothing known", {"python:3.11"}, {}, {}, Framework::kUnknown},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.what);
    PodInfo pod;
    pod.name = "ctr-ps-0";
    pod.images = c.images;
    pod.annotations = c.annotations;
    pod.labels = c.labels;
    TrainingIdentity id = InferTrainingIdentity(pod, DefaultLabelSchemes());
    EXPECT_EQ(id.framework, c.want) << FrameworkName(id.framework);
  }
}

// Pods that are no training pods get no kind or framework, whatever image.
TEST(OperatorPodsTest, NonTrainingPodsHaveNoKind) {
  PodInfo pod;
  pod.name = "serving-7d9f8b6c5-x2k4q";
  pod.images = {"tensorflow/serving:2.15.0"};
  pod.owner_kind = "ReplicaSet";
  TrainingIdentity id = InferTrainingIdentity(pod, DefaultLabelSchemes());
  EXPECT_EQ(id.role, Role::kUnknown);
  EXPECT_EQ(id.job_kind, JobKind::kUnknown);
  EXPECT_EQ(id.framework, Framework::kUnknown);
}

// "server" and "scheduler" are no name roles: StatefulSets named
// api-server-0 must stay ordinary pods.
TEST(OperatorPodsTest, ServerInANameIsNoParameterServer) {
  for (const char* name : {"api-server-0", "kube-scheduler-1"}) {
    TrainingIdentity id;
    EXPECT_FALSE(ParsePodNamePattern(name, &id)) << name;
  }
}

// The default --pod-filter (training pods only) keeps every JobSet,
// TrainJob and Volcano training pod, and only those.
TEST(OperatorPodsTest, DefaultPodFilterKeepsBatchJobPods) {
  const PodFilter training{.training_only = true};
  for (const char* file : {"trainjob.json", "jobset.json", "volcano.json"}) {
    for (const auto& pod :
         PreparePodsForPublish(LoadFixture(file), DefaultLabelSchemes())) {
      SCOPED_TRACE(pod.name);
      EXPECT_EQ(training.Exports(pod), pod.name != "tpu-driver-0-0-p0o9i");
    }
  }
}

// The JobSet pod name `<jobset>-<replicatedjob>-<jobIndex>-<podIndex>-<sfx>`
// (jobset pkg/util/placement/placement.go plus the Job controller's pod
// suffix) gives the completion index when no label or annotation does.
TEST(BatchJobsTest, JobSetPodIndexFromName) {
  struct Case {
    std::string pod, jobset, rjob;
    int want;
  } cases[] = {
      {"llama-node-0-2-q4m8z", "llama", "node", 2},
      {"my-job-workers-1-12-abcde", "my-job", "workers", 12},
      {"llama-node-0-2", "llama", "node", -1},        // no pod suffix
      {"llama-node-x-2-abcde", "llama", "node", -1},  // job index not a number
      {"llama-nodes-0-2-abcde", "llama", "node", -1},
      {"other-node-0-2-abcde", "llama", "node", -1},
      {"llama-node-0-2-abcde", "", "node", -1},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(JobSetPodIndexFromName(c.pod, c.jobset, c.rjob), c.want) << c.pod;
  }
}

// Labels alone, no index label or annotation: the name gives the rank.
TEST(BatchJobsTest, IndexFromTheNameWhenNoLabelHasIt) {
  PodInfo jobset;
  jobset.name = "llama-node-0-4-q4m8z";
  jobset.labels = {{std::string(kJobSetNameKey), "llama"},
                   {std::string(kReplicatedJobNameKey), "node"}};
  TrainingIdentity id = InferTrainingIdentity(jobset, DefaultLabelSchemes());
  EXPECT_EQ(id.index, 4);
  EXPECT_EQ(id.job_kind, JobKind::kTrainJob);

  PodInfo volcano;
  volcano.name = "lm-mpi-job-mpiworker-3";
  volcano.labels = {{std::string(kVolcanoJobNameKey), "lm-mpi-job"},
                    {std::string(kVolcanoTaskSpecKey), "mpiworker"}};
  id = InferTrainingIdentity(volcano, DefaultLabelSchemes());
  EXPECT_EQ(id.job, "lm-mpi-job");
  EXPECT_EQ(id.role, Role::kWorker);
  EXPECT_EQ(id.index, 3);
  EXPECT_EQ(id.job_kind, JobKind::kVolcanoJob);
}

// Names only one label key reads as roles: `node` never makes a pod with a
// seed-layout `job=node` label (node-exporter style) a training pod.
TEST(BatchJobsTest, KeySpecificRoleNames) {
  EXPECT_EQ(RoleOfLabelValue(kReplicatedJobNameKey, "node"), Role::kWorker);
  EXPECT_EQ(RoleOfLabelValue(kReplicatedJobNameKey, "workers"), Role::kWorker);
  EXPECT_EQ(RoleOfLabelValue(kReplicatedJobNameKey, "launcher"),
            Role::kLauncher);
  EXPECT_EQ(RoleOfLabelValue(kReplicatedJobNameKey, "driver"), std::nullopt);
  EXPECT_EQ(RoleOfLabelValue(kVolcanoTaskSpecKey, "mpimaster"),
            Role::kLauncher);
  EXPECT_EQ(RoleOfLabelValue("job", "node"), std::nullopt);
  EXPECT_EQ(RoleOfLabelValue("job", "workers"), std::nullopt);
  EXPECT_EQ(RoleOfLabelValue("job", "mpiworker"), std::nullopt);

  PodInfo exporter;
  exporter.name = "node-exporter-x7k2p";
  exporter.labels = {{"job", "node"}, {"name", "node-exporter"}};
  EXPECT_EQ(InferTrainingIdentity(exporter, DefaultLabelSchemes()).role,
            Role::kUnknown);
}

}  // namespace
}  // namespace trainscope
