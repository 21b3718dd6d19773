#include "trainscope/pod.h"

#include <algorithm>

#include "trainscope/ascii_case.h"

namespace trainscope {

std::string_view RoleName(Role role) {
  switch (role) {
    case Role::kPs:
      return "ps";
    case Role::kWorker:
      return "worker";
    case Role::kChief:
      return "chief";
    case Role::kMaster:
      return "master";
    case Role::kEvaluator:
      return "evaluator";
    case Role::kLauncher:
      return "launcher";
    case Role::kScheduler:
      return "scheduler";
    case Role::kUnknown:
      break;
  }
  return "";
}

std::optional<Role> ParseRole(std::string_view text) {
  const std::string lower = AsciiLower(text);
  // MXNet's kvstore `server` (MXJob replica type Server, DMLC_ROLE=server)
  // holds and updates the parameters: a parameter server in every sense the
  // diagnosis cares about.
  if (lower == "ps" || lower == "parameter_server" ||
      lower == "parameterserver" || lower == "server") {
    return Role::kPs;
  }
  if (lower == "worker") return Role::kWorker;
  if (lower == "chief") return Role::kChief;
  if (lower == "master") return Role::kMaster;
  if (lower == "evaluator") return Role::kEvaluator;
  if (lower == "launcher") return Role::kLauncher;
  if (lower == "scheduler") return Role::kScheduler;
  return std::nullopt;
}

std::vector<std::string_view> RoleLabelValues() {
  std::vector<std::string_view> out;
  for (Role r : {Role::kPs, Role::kWorker, Role::kChief, Role::kMaster,
                 Role::kEvaluator, Role::kLauncher, Role::kScheduler}) {
    out.push_back(RoleName(r));
  }
  out.push_back("server");  // MXJob's parameter servers (ParseRole)
  // Names only one label key reads as roles (discovery/batch_jobs.h): the
  // Kubeflow Trainer's `node` and JobSet's plural `workers` replicated
  // jobs, Volcano's MPI example tasks. A selector that names them fetches
  // at most a few more pods; identity inference still decides.
  for (std::string_view v : {"mpimaster", "mpiworker", "node", "workers"}) {
    out.push_back(v);
  }
  std::sort(out.begin(), out.end());
  return out;
}

bool RunsTrainingSteps(Role role) {
  return role == Role::kWorker || role == Role::kMaster;
}

std::string_view JobKindName(JobKind kind) {
  switch (kind) {
    case JobKind::kTFJob:
      return "TFJob";
    case JobKind::kPyTorchJob:
      return "PyTorchJob";
    case JobKind::kMPIJob:
      return "MPIJob";
    case JobKind::kMXJob:
      return "MXJob";
    case JobKind::kXGBoostJob:
      return "XGBoostJob";
    case JobKind::kPaddleJob:
      return "PaddleJob";
    case JobKind::kJAXJob:
      return "JAXJob";
    case JobKind::kTrainJob:
      return "TrainJob";
    case JobKind::kJobSet:
      return "JobSet";
    case JobKind::kVolcanoJob:
      return "VolcanoJob";
    case JobKind::kUnknown:
      break;
  }
  return "";
}

std::optional<JobKind> ParseJobKind(std::string_view text) {
  const std::string lower = AsciiLower(text);
  for (JobKind k : {JobKind::kTFJob, JobKind::kPyTorchJob, JobKind::kMPIJob,
                    JobKind::kMXJob, JobKind::kXGBoostJob, JobKind::kPaddleJob,
                    JobKind::kJAXJob, JobKind::kTrainJob, JobKind::kJobSet,
                    JobKind::kVolcanoJob}) {
    if (lower == AsciiLower(JobKindName(k))) return k;
  }
  return std::nullopt;
}

std::string_view FrameworkName(Framework framework) {
  switch (framework) {
    case Framework::kTensorFlow:
      return "tensorflow";
    case Framework::kTensorFlow1:
      return "tensorflow1";
    case Framework::kTensorFlow2:
      return "tensorflow2";
    case Framework::kPyTorch:
      return "pytorch";
    case Framework::kMXNet:
      return "mxnet";
    case Framework::kUnknown:
      break;
  }
  return "";
}

std::optional<Framework> ParseFramework(std::string_view text) {
  const std::string lower = AsciiLower(text);
  for (Framework f :
       {Framework::kTensorFlow, Framework::kTensorFlow1,
        Framework::kTensorFlow2, Framework::kPyTorch, Framework::kMXNet}) {
    if (lower == FrameworkName(f)) return f;
  }
  return std::nullopt;
}

bool IsTensorFlow(Framework framework) {
  return framework == Framework::kTensorFlow ||
         framework == Framework::kTensorFlow1 ||
         framework == Framework::kTensorFlow2;
}

PodTable::PodTable() : pods_(std::make_shared<const PodList>()) {}

void PodTable::Replace(PodList pods) {
  auto fresh = std::make_shared<const PodList>(std::move(pods));
  std::lock_guard lock(mu_);
  pods_ = std::move(fresh);
  ++generation_;
}

std::shared_ptr<const PodList> PodTable::Get() const {
  std::lock_guard lock(mu_);
  return pods_;
}

uint64_t PodTable::generation() const {
  std::lock_guard lock(mu_);
  return generation_;
}

}  // namespace trainscope
