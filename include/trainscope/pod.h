#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainscope {

// What a pod does in its training job (docs/discovery.md, "Roles"). MXNet's
// `server` is a parameter server and is kPs; MXNet's `scheduler` and MPI's
// `launcher` only coordinate and are never compared with the ranks.
enum class Role {
  kUnknown,
  kPs,
  kWorker,
  kChief,
  kMaster,
  kEvaluator,
  kLauncher,
  kScheduler,
};

// "ps", "worker", ...; "" for kUnknown (the label value Prometheus shows).
std::string_view RoleName(Role role);
// Case-insensitive; accepts the Kubeflow replica types of every job kind
// (TFJob, PyTorchJob, MPIJob, MXJob, ...), "parameter_server" and MXNet's
// "server" (both kPs).
std::optional<Role> ParseRole(std::string_view text);
// Every role label value ParseRole knows (each role's name, and MXNet's
// "server") and the names only some role keys read as roles (Trainer's
// "node", JobSet's "workers", Volcano MPI's "mpimaster"/"mpiworker"),
// sorted: what a set-based label selector names to find training pods.
std::vector<std::string_view> RoleLabelValues();

// Roles whose exchanges repeat once per training step and so have a step
// rate: workers and allreduce masters (rank 0); not the TF2 chief, whose
// closures come from every worker.
bool RunsTrainingSteps(Role role);

// The custom resource that owns a pod, when it can be known: a Kubeflow v1
// job, a Kubeflow Trainer v2 TrainJob, a plain JobSet or a Volcano Job.
enum class JobKind {
  kUnknown,
  kTFJob,
  kPyTorchJob,
  kMPIJob,
  kMXJob,
  kXGBoostJob,
  kPaddleJob,
  kJAXJob,
  kTrainJob,
  kJobSet,
  kVolcanoJob,
};
// "TFJob", "PyTorchJob", ..., "TrainJob", "JobSet", "VolcanoJob"; "" for
// kUnknown (the job_kind label value).
std::string_view JobKindName(JobKind kind);
// Exact (case-insensitive) kind names as above.
std::optional<JobKind> ParseJobKind(std::string_view text);

// The training framework and, for TensorFlow, its generation: the APIs a
// recommendation may name differ between TF 1 and TF 2.
enum class Framework {
  kUnknown,
  kTensorFlow,   // generation unknown
  kTensorFlow1,  // TF 1.x (tf.contrib, replica_device_setter, Estimator)
  kTensorFlow2,  // TF 2.x (tf.distribute strategies)
  kPyTorch,
  kMXNet,
};
// "tensorflow", "tensorflow1", "tensorflow2", "pytorch", "mxnet"; "" unknown.
std::string_view FrameworkName(Framework framework);
std::optional<Framework> ParseFramework(std::string_view text);
bool IsTensorFlow(Framework framework);

// A container's last exit (the API's lastState.terminated).
struct ContainerTermination {
  std::string reason;  // "OOMKilled", "Error", "Completed", ... ("" unknown)
  int exit_code = 0;
  int signal = 0;                       // 0 when none reported
  std::optional<double> finished_at_s;  // Unix seconds

  bool operator==(const ContainerTermination&) const = default;
};

// The kubelet's waiting reason for a container it restarts with back-off.
inline constexpr std::string_view kCrashLoopBackOff = "CrashLoopBackOff";

struct ContainerInfo {
  std::string name;
  std::string id;       // runtime id without the "containerd://" scheme
  std::string runtime;  // "containerd", "cri-o", "docker", ... ("" unknown)
  // The kubelet's view (status.containerStatuses[]): how often it restarted
  // the container, why the last run ended, and what it does now.
  std::optional<int> restart_count;  // absent when the source has no status
  std::optional<ContainerTermination> last_terminated;
  std::string waiting_reason;  // "CrashLoopBackOff", ... ("" not waiting)
  std::optional<double> running_since_s;  // state.running.startedAt
};

struct PodInfo {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string node;
  std::string phase;
  std::string pod_ip;
  std::vector<std::string> pod_ips;
  bool host_network = false;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<ContainerInfo> containers;
  // TF_CONFIG of the first container that sets it ("" when none does).
  std::string tf_config;
  // Other training environment variables (DMLC_ROLE, MASTER_ADDR, RANK,
  // WORLD_SIZE, K_MPI_JOB_ROLE, OMPI_MCA_*, ...; see pod_json.cc), each from
  // the first container that sets it with a literal value.
  std::map<std::string, std::string> training_env;
  // Container images in spec order (the framework generation hides in tags).
  std::vector<std::string> images;
  // Kind of the controlling ownerReference ("TFJob", "Job", ...; "" none).
  std::string owner_kind;
  // Sum of the containers' limits in the pod spec, when every container
  // sets one (a pod with one unlimited container is unlimited).
  std::optional<double> spec_cpu_limit_cores;
  std::optional<uint64_t> spec_memory_limit_bytes;

  // Training identity, inferred by discovery/roles.
  std::string training_job;
  Role role = Role::kUnknown;
  int replica_index = -1;  // -1 when unknown
  JobKind job_kind = JobKind::kUnknown;
  Framework framework = Framework::kUnknown;
};

using PodList = std::vector<PodInfo>;

// The pods this agent currently knows. Discovery replaces the whole list;
// readers take an immutable shared snapshot and never block discovery.
class PodTable {
 public:
  PodTable();
  void Replace(PodList pods);
  std::shared_ptr<const PodList> Get() const;
  // Increments on every Replace; lets readers skip unchanged lists.
  uint64_t generation() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const PodList> pods_;
  uint64_t generation_ = 0;
};

}  // namespace trainscope
