// What kind of job (Kubeflow, JobSet, Volcano) a training pod belongs to and
// which framework it runs. Both only steer wording (recommendations name APIs
// that exist in the user's framework generation) and which detectors treat a
// job as allreduce; a wrong guess never hides a pod.
#include <string>

#include "discovery/batch_jobs.h"
#include "discovery/roles.h"
#include "trainscope/ascii_case.h"

namespace trainscope {
namespace {

std::string_view LabelOf(const PodInfo& pod, const std::string& key) {
  auto it = pod.labels.find(key);
  return it == pod.labels.end() ? std::string_view() : it->second;
}

bool HasEnv(const PodInfo& pod, std::string_view key) {
  return pod.training_env.count(std::string(key)) > 0;
}

bool HasEnvPrefix(const PodInfo& pod, std::string_view prefix) {
  auto it = pod.training_env.lower_bound(std::string(prefix));
  return it != pod.training_env.end() && it->first.starts_with(prefix);
}

// training.kubeflow.org/operator-name values of training-operator v1.x
// (one controller per kind) and mpi-operator v2; the old operators'
// controller-name label.
std::optional<JobKind> KindOfOperator(std::string_view name) {
  static const std::pair<std::string_view, JobKind> kOperators[] = {
      {"tfjob-controller", JobKind::kTFJob},
      {"tf-operator", JobKind::kTFJob},
      {"pytorchjob-controller", JobKind::kPyTorchJob},
      {"pytorch-operator", JobKind::kPyTorchJob},
      {"mpijob-controller", JobKind::kMPIJob},
      {"mpi-operator", JobKind::kMPIJob},
      {"mxjob-controller", JobKind::kMXJob},
      {"mxnet-operator", JobKind::kMXJob},
      {"xgboostjob-controller", JobKind::kXGBoostJob},
      {"paddlejob-controller", JobKind::kPaddleJob},
      {"jaxjob-controller", JobKind::kJAXJob},
  };
  const std::string lower = AsciiLower(name);
  for (const auto& [op, kind] : kOperators) {
    if (lower == op) return kind;
  }
  return std::nullopt;
}

// Label schemes that only one operator ever used.
std::optional<JobKind> KindOfSource(std::string_view source) {
  if (source == "labels:tf-replica-type") return JobKind::kTFJob;
  if (source == "labels:pytorch-replica-type") return JobKind::kPyTorchJob;
  if (source == "labels:mpi-job-role") return JobKind::kMPIJob;
  if (source == "labels:replica-type") return JobKind::kTFJob;  // v1.0-1.2
  if (source == "labels:training.kubeflow.org/job-role") {
    return JobKind::kMPIJob;  // only mpi-operator v2 lacks replica-type
  }
  return std::nullopt;
}

// Replica types that only one job kind has (master and worker are shared).
std::optional<JobKind> KindOfReplicaType(std::string_view type) {
  const std::string lower = AsciiLower(type);
  if (lower == "ps" || lower == "chief" || lower == "evaluator") {
    return JobKind::kTFJob;
  }
  if (lower == "server" || lower == "scheduler") return JobKind::kMXJob;
  if (lower == "launcher") return JobKind::kMPIJob;
  return std::nullopt;
}

// What the operator of each kind puts into the environment.
JobKind KindOfEnvironment(const PodInfo& pod) {
  if (HasEnv(pod, "K_MPI_JOB_ROLE") || HasEnvPrefix(pod, "OMPI_MCA_") ||
      HasEnvPrefix(pod, "I_MPI_")) {
    return JobKind::kMPIJob;
  }
  if (HasEnv(pod, "MX_CONFIG") || HasEnv(pod, "DMLC_ROLE")) {
    return JobKind::kMXJob;
  }
  if (!pod.tf_config.empty()) return JobKind::kTFJob;
  if ((HasEnv(pod, "MASTER_ADDR") || HasEnv(pod, "PET_MASTER_ADDR")) &&
      (HasEnv(pod, "WORLD_SIZE") || HasEnv(pod, "PET_NNODES"))) {
    return JobKind::kPyTorchJob;
  }
  return JobKind::kUnknown;
}

// "registry:5000/ns/tensorflow:1.15.5-gpu" -> {"tensorflow", "1.15.5-gpu"}.
std::pair<std::string, std::string> ImageRepoAndTag(std::string_view image) {
  image = image.substr(0, image.find('@'));  // drop a digest
  const size_t slash = image.rfind('/');
  std::string_view last =
      slash == std::string_view::npos ? image : image.substr(slash + 1);
  const size_t colon = last.find(':');
  if (colon == std::string_view::npos) return {AsciiLower(last), ""};
  return {AsciiLower(last.substr(0, colon)),
          AsciiLower(last.substr(colon + 1))};
}

// The framework an image names, with TensorFlow's generation from a tag
// that starts with the version ("1.15.5-gpu", "2.13.0").
Framework FrameworkOfImage(std::string_view image) {
  auto [repo, tag] = ImageRepoAndTag(image);
  if (repo.find("tensorflow") != std::string::npos) {
    if (tag.starts_with("1.")) return Framework::kTensorFlow1;
    if (tag.starts_with("2.")) return Framework::kTensorFlow2;
    return Framework::kTensorFlow;
  }
  if (repo.find("pytorch") != std::string::npos ||
      repo.find("torch") != std::string::npos) {
    return Framework::kPyTorch;
  }
  if (repo.find("mxnet") != std::string::npos) return Framework::kMXNet;
  return Framework::kUnknown;
}

Framework FrameworkOfKind(JobKind kind) {
  switch (kind) {
    case JobKind::kTFJob:
      return Framework::kTensorFlow;
    case JobKind::kPyTorchJob:
      return Framework::kPyTorch;
    case JobKind::kMXJob:
      return Framework::kMXNet;
    default:
      // MPIJob runs Horovod over TF or PyTorch; the others are no concern.
      return Framework::kUnknown;
  }
}

// Traits that exist only in TF 1: a `master` task (TF 2 has none) and the
// seed layout's name/job/task labels of hand-written TF 1 between-graph
// manifests.
bool ShowsTf1Traits(const PodInfo& pod, const TrainingIdentity& id) {
  if (id.role == Role::kMaster && !pod.tf_config.empty()) return true;
  return id.source == "labels:job" && pod.labels.count("name") > 0 &&
         pod.labels.count("task") > 0;
}

}  // namespace

JobKind InferJobKind(const PodInfo& pod, const TrainingIdentity& id) {
  if (id.role == Role::kUnknown) return JobKind::kUnknown;
  if (auto kind = ParseJobKind(pod.owner_kind)) return *kind;
  for (const char* key :
       {"training.kubeflow.org/operator-name", "controller-name"}) {
    if (auto kind = KindOfOperator(LabelOf(pod, key))) return *kind;
  }
  if (auto kind = BatchJobKind(pod, id)) return *kind;
  if (auto kind = KindOfSource(id.source)) return *kind;
  if (JobKind env = KindOfEnvironment(pod); env != JobKind::kUnknown) {
    return env;
  }
  if (auto kind = KindOfReplicaType(
          LabelOf(pod, "training.kubeflow.org/replica-type"))) {
    return *kind;
  }
  return JobKind::kUnknown;
}

Framework InferFramework(const PodInfo& pod, const TrainingIdentity& id) {
  if (id.role == Role::kUnknown) return Framework::kUnknown;
  if (auto it = pod.annotations.find("trainscope.io/framework");
      it != pod.annotations.end()) {
    if (auto f = ParseFramework(it->second)) return *f;
  }
  Framework found = Framework::kUnknown;
  for (const auto& image : pod.images) {
    found = FrameworkOfImage(image);
    if (found != Framework::kUnknown) break;
  }
  if (found == Framework::kUnknown) found = FrameworkOfKind(id.job_kind);
  if (found == Framework::kUnknown) {
    found = FrameworkOfKind(KindOfEnvironment(pod));
  }
  if (found == Framework::kUnknown && ShowsTf1Traits(pod, id)) {
    found = Framework::kTensorFlow;
  }
  if (found == Framework::kTensorFlow && ShowsTf1Traits(pod, id)) {
    found = Framework::kTensorFlow1;
  }
  return found;
}

}  // namespace trainscope
