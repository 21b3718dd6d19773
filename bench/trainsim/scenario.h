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

enum class LabelStyle { kKubeflow, kSeed, kTfConfig, kNameOnly };
enum class Strategy { kRoundRobin, kGreedy, kPartitioned };
enum class PodRole { kPs, kWorker };
enum class FaultKind {
  kCpuLimit,
  kCpuHog,
  kBandwidthLimit,
  kMemoryFill,
  kInputRead,
  kGpu,
  kNodeBandwidthLimit
};
// Where a job's pods go when the scenario declares `nodes` (cluster.cc).
enum class NodeLayout { kPsWithWorkers, kPsIsolated, kSpread, kRandom };

std::string_view LabelStyleName(LabelStyle style);
std::string_view StrategyName(Strategy strategy);
std::string_view PodRoleName(PodRole role);
std::string_view FaultKindName(FaultKind kind);
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

struct Job {
  std::string namespace_name = "default";
  std::string name;
  LabelStyle labels = LabelStyle::kKubeflow;
  int ps = 1;
  int workers = 1;
  int port = 2222;
  int step_ms = 1000;
  int compute_ms = 0;
  std::vector<Variable> variables;  // after "count" expansion
  Placement placement;
  Resources ps_resources;
  Resources worker_resources;
  // Cluster placement (only with Scenario::nodes; see cluster_spec.cc).
  std::optional<NodeLayout> layout;
  int ps_nodes = 0;                              // ps_isolated
  uint64_t layout_seed = 0;                      // random
  std::map<std::string, std::string> pod_nodes;  // pod -> node overrides

  std::string PodName(PodRole role, int index) const;
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
};

// (kind, pod) for a pod's diagnosis, (kind, node) for a node-level one
// (empty pod); `severity` empty means warning or critical.
struct Expectation {
  std::string kind;
  std::string pod;
  std::string node;
  std::string severity;
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
};

// The diagnosis kinds of DESIGN.md's catalog; expect/allow must use these.
const std::vector<std::string>& DiagnosisKinds();

// Parses and validates; throws ScenarioError naming the field and problem.
Scenario ParseScenario(const nlohmann::json& doc);
Scenario ParseScenarioText(std::string_view text);
Scenario LoadScenarioFile(const std::string& path);

}  // namespace trainsim
