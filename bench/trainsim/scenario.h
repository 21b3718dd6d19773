#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace trainsim {

// A scenario that does not follow the format; the message names the field
// (as a JSON path like "jobs[0].placement.shards") and the problem.
class ScenarioError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// kJobSet: a JobSet's pods (Kubeflow Trainer v2 for allreduce jobs, whose
// TrainJob runs one `node` replicated job); kVolcano: a Volcano Job's.
enum class LabelStyle {
  kKubeflow,
  kSeed,
  kTfConfig,
  kNameOnly,
  kJobSet,
  kVolcano
};
enum class Strategy { kRoundRobin, kGreedy, kPartitioned };
// kMaster: a PyTorchJob's Master replica (rank 0 of an allreduce job with
// `chief: 1`); kChief: a TFJob chief (the TF2 coordinator).
enum class PodRole { kPs, kWorker, kChief, kEvaluator, kMaster };
// ps_async: today's asynchronous PS job; ps_sync: every worker waits for the
// slowest before its next step; allreduce: no PS, a ring allreduce of
// gradient_bytes per step among the ranks.
enum class JobKind { kPsAsync, kPsSync, kAllreduce };
// Where a worker's compute_ms goes: CPU time it burns, or wall time an
// accelerator computes while the worker's CPU idles (GPU training).
enum class ComputeOn { kCpu, kAccelerator };
enum class FaultKind {
  kCpuLimit,
  kCpuHog,
  kBandwidthLimit,
  kMemoryFill,
  kInputRead,
  kGpu,
  kNodeBandwidthLimit,
  kCrash,
  kHang,
  kCheckpoint,
  kOom
};
// How a `hang` fault stops a pod (docs/trainsim.md "Hangs").
enum class HangMode {
  kSigstop,
  kBusyLoop,
  kBlockedIo,
  kLinkBlackhole,
  kAllWait
};
// Where a job's pods go when the scenario declares `nodes` (cluster.cc).
enum class NodeLayout { kPsWithWorkers, kPsIsolated, kSpread, kRandom };

std::string_view LabelStyleName(LabelStyle style);
std::string_view StrategyName(Strategy strategy);
std::string_view PodRoleName(PodRole role);
std::string_view JobKindName(JobKind kind);
std::string_view FaultKindName(FaultKind kind);
// The crash and oom faults: the pod's process dies (and restarts), so its
// counts and its rate over a window are not comparable.
bool KillsPodProcess(FaultKind kind);
std::string_view HangModeName(HangMode mode);
std::string_view NodeLayoutName(NodeLayout layout);

struct Variable {
  std::string name;
  uint64_t bytes = 0;
};

struct Placement {
  Strategy strategy = Strategy::kRoundRobin;
  uint64_t min_slice_bytes = 262144;
  int shards = 0;  // 0: the job's PS count
};

struct Resources {
  std::optional<double> cpu_limit_cores;
  std::optional<uint64_t> memory_limit_bytes;
};

// A real training program run in every pod of a job instead of the built-in
// process (docs/trainsim.md "Programs"). Placeholders such as ${ROLE} are
// expanded per pod when the pod starts.
struct Program {
  std::vector<std::string> argv;
  std::vector<std::pair<std::string, std::string>> env;  // declared order
};

struct Job {
  std::string namespace_name = "default";
  JobKind kind = JobKind::kPsAsync;
  std::string name;
  LabelStyle labels = LabelStyle::kKubeflow;
  int ps = 1;
  int workers = 1;
  int port = 2222;
  int step_ms = 1000;  // 0: free-running (no idle slack between steps)
  int compute_ms = 0;
  ComputeOn compute_on = ComputeOn::kCpu;
  std::vector<Variable> variables;  // after "count" expansion
  Placement placement;
  Resources ps_resources;
  Resources worker_resources;
  // Cluster placement (only with Scenario::nodes; see cluster_spec.cc).
  std::optional<NodeLayout> layout;
  int ps_nodes = 0;                              // ps_isolated
  uint64_t layout_seed = 0;                      // random
  std::map<std::string, std::string> pod_nodes;  // pod -> node overrides
  std::optional<Resources> chief_resources;      // default: worker's
  std::optional<Resources> evaluator_resources;  // default: worker's
  int chief = 0;                // TFJob chief / PyTorchJob master replicas
  int evaluator = 0;            // TF evaluators (not with allreduce)
  uint64_t gradient_bytes = 0;  // allreduce: bytes reduced per step
  std::optional<Program> program;

  std::string PodName(PodRole role, int index) const;
  // Every replica role of the job with its count, in layout order: PS,
  // workers, then chief (or master) and evaluator, so adding a chief never
  // moves the addresses of the other pods.
  std::vector<std::pair<PodRole, int>> Replicas() const;
  // The role `chief` pods have: kMaster for allreduce (PyTorchJob), else
  // kChief (TFJob).
  PodRole ChiefRole() const;
  Resources ResourcesFor(PodRole role) const;
};

struct Fault {
  FaultKind kind = FaultKind::kCpuLimit;
  std::string pod;   // empty for node faults
  std::string node;  // node_bandwidth_limit
  double start_s = 0;
  double cores = 0;             // cpu_limit
  int threads = 0;              // cpu_hog
  double mbit = 0;              // bandwidth_limit, input_read
  double ratio_of_limit = 0;    // memory_fill
  uint64_t bytes_per_step = 0;  // input_read
  double utilization = 0;       // gpu (0..1)
  uint64_t memory_bytes = 0;    // gpu
  int xid = 0;  // gpu: an Xid its GPU raises at the fault's start (0: none)
  int exit_code = 1;                        // crash
  double every_s = 0;                       // crash, oom: repeats (0 = once)
  HangMode hang_mode = HangMode::kSigstop;  // hang
  std::string peer;                         // hang link_blackhole
  uint64_t bytes = 0;                       // checkpoint
  double duration_s = 0;  // hang, checkpoint: 0 = until the run ends
};

// (kind, pod) for a pod's diagnosis, (kind, node) for a node-level one
// (empty pod), (kind, job) for a job-level one (empty pod; job is
// "namespace/name"); `severity` empty means warning or critical, else exactly
// that severity ("info", "warning", "critical").
struct Expectation {
  std::string kind;
  std::string pod;
  std::string node;
  std::string severity;
  std::string job;  // "namespace/name"
  bool operator==(const Expectation&) const = default;
};

// A simulated node of a cluster scenario; nic_mbit 0 = uplink not shaped.
struct NodeSpec {
  std::string name;
  double nic_mbit = 0;
};

struct Scenario {
  std::string name;
  double duration_s = 60;
  double interval_s = 5;
  std::vector<NodeSpec> nodes;  // empty: one node, as in the first edition
  std::vector<Job> jobs;
  std::vector<Fault> faults;
  std::vector<Expectation> expect;
  std::vector<Expectation> allow;
  // Non-empty: why `verify` does not compare the agent's steps/s per
  // worker with the ground truth for this scenario (docs/trainsim.md).
  std::string skip_step_rate_check;
  // Non-empty: why the agent may withdraw a worker's steps/s here (traffic
  // with no trustworthy period, docs/flows.md "Step rates"): `verify` then
  // accepts a worker without an estimate, as long as the estimates it did
  // give are right (docs/trainsim.md).
  std::string step_rates_may_withdraw;
};

// The job a "namespace/name" names (expect[].job), nullptr when none.
const Job* FindJob(const Scenario& s, const std::string& ns_name);

// The diagnosis kinds of DESIGN.md's catalog; expect/allow must use these.
const std::vector<std::string>& DiagnosisKinds();

// Parses and validates; throws ScenarioError naming the field and problem.
Scenario ParseScenario(const nlohmann::json& doc);
Scenario ParseScenarioText(std::string_view text);
Scenario LoadScenarioFile(const std::string& path);

}  // namespace trainsim
