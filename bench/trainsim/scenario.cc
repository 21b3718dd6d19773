#include "scenario.h"

#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "cluster_spec.h"
#include "diagnosis/detectors.h"
#include "pod_env.h"

namespace trainsim {
namespace {

using nlohmann::json;

[[noreturn]] void Fail(const std::string& path, const std::string& problem) {
  throw ScenarioError(path + ": " + problem);
}

// One JSON object under validation; remembers its path for messages and
// rejects keys it does not know, so a typo ("stratgy") is an error rather
// than a silently ignored setting.
class Obj {
 public:
  Obj(const json& j, std::string path) : j_(j), path_(std::move(path)) {
    if (!j_.is_object())
      Fail(path_.empty() ? "<root>" : path_, "must be an object");
  }

  std::string Path(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  bool Has(const std::string& key) {
    seen_.insert(key);
    return j_.contains(key);
  }
  const json& At(const std::string& key) {
    if (!Has(key)) Fail(Path(key), "is required");
    return j_.at(key);
  }

  std::string Str(const std::string& key, std::optional<std::string> def = {}) {
    if (!Has(key)) {
      if (def) return *def;
      Fail(Path(key), "is required");
    }
    const json& v = j_.at(key);
    if (!v.is_string()) Fail(Path(key), "must be a string, got " + v.dump());
    std::string s = v.get<std::string>();
    if (s.empty()) Fail(Path(key), "must not be empty");
    return s;
  }

  double Num(const std::string& key, std::optional<double> def = {}) {
    if (!Has(key)) {
      if (def) return *def;
      Fail(Path(key), "is required");
    }
    const json& v = j_.at(key);
    if (!v.is_number()) Fail(Path(key), "must be a number, got " + v.dump());
    double d = v.get<double>();
    if (!std::isfinite(d)) Fail(Path(key), "must be finite");
    return d;
  }

  int64_t Int(const std::string& key, std::optional<int64_t> def = {}) {
    if (!Has(key)) {
      if (def) return *def;
      Fail(Path(key), "is required");
    }
    const json& v = j_.at(key);
    if (!v.is_number_integer())
      Fail(Path(key), "must be an integer, got " + v.dump());
    return v.get<int64_t>();
  }

  // Everything not read so far is unknown; "description" and "_"-prefixed
  // keys are free-form comments.
  void RejectUnknown() const {
    for (const auto& [key, _] : j_.items()) {
      if (seen_.count(key) || key == "description" || key.starts_with("_"))
        continue;
      Fail(Path(key), "unknown field");
    }
  }

 private:
  const json& j_;
  std::string path_;
  std::set<std::string> seen_;
};

int64_t AtLeast(int64_t v, int64_t min, const std::string& path) {
  if (v < min) {
    if (v < 0 && min >= 0)
      Fail(path, "must not be negative, got " + std::to_string(v));
    Fail(path,
         "must be >= " + std::to_string(min) + ", got " + std::to_string(v));
  }
  return v;
}

// Every pod runs as a process on this machine: a replica count past this is
// a typo, and naming that many pods would take minutes before failing.
constexpr int64_t kMaxReplicas = 1000;
constexpr int64_t kMaxVariables = 10000;

int64_t Replicas(int64_t v, int64_t min, const std::string& path) {
  AtLeast(v, min, path);
  if (v > kMaxReplicas)
    Fail(path, "must be <= " + std::to_string(kMaxReplicas) +
                   " (every pod runs as a process on this machine), got " +
                   std::to_string(v));
  return v;
}

double Positive(double v, const std::string& path) {
  if (v <= 0) Fail(path, "must be > 0, got " + json(v).dump());
  return v;
}

double NonNegative(double v, const std::string& path) {
  if (v < 0) Fail(path, "must not be negative, got " + json(v).dump());
  return v;
}

template <typename E, size_t N>
E ParseEnum(const std::string& text,
            const std::pair<const char*, E> (&table)[N],
            const std::string& path, const char* what) {
  std::string names;
  for (const auto& [name, value] : table) {
    if (text == name) return value;
    names += names.empty() ? name : std::string(", ") + name;
  }
  Fail(path, "unknown " + std::string(what) + " \"" + text +
                 "\" (one of: " + names + ")");
}

const std::pair<const char*, LabelStyle> kLabelStyles[] = {
    {"kubeflow", LabelStyle::kKubeflow},  {"seed", LabelStyle::kSeed},
    {"tf_config", LabelStyle::kTfConfig}, {"name_only", LabelStyle::kNameOnly},
    {"jobset", LabelStyle::kJobSet},      {"volcano", LabelStyle::kVolcano}};
const std::pair<const char*, Strategy> kStrategies[] = {
    {"round_robin", Strategy::kRoundRobin},
    {"greedy", Strategy::kGreedy},
    {"partitioned", Strategy::kPartitioned}};
const std::pair<const char*, JobKind> kJobKinds[] = {
    {"ps_async", JobKind::kPsAsync},
    {"ps_sync", JobKind::kPsSync},
    {"allreduce", JobKind::kAllreduce}};
const std::pair<const char*, ComputeOn> kComputeOn[] = {
    {"cpu", ComputeOn::kCpu}, {"accelerator", ComputeOn::kAccelerator}};
const std::pair<const char*, PodRole> kPodRoles[] = {
    {"ps", PodRole::kPs},
    {"worker", PodRole::kWorker},
    {"chief", PodRole::kChief},
    {"evaluator", PodRole::kEvaluator},
    {"master", PodRole::kMaster}};
const std::pair<const char*, FaultKind> kFaultKinds[] = {
    {"cpu_limit", FaultKind::kCpuLimit},
    {"cpu_hog", FaultKind::kCpuHog},
    {"bandwidth_limit", FaultKind::kBandwidthLimit},
    {"memory_fill", FaultKind::kMemoryFill},
    {"input_read", FaultKind::kInputRead},
    {"gpu", FaultKind::kGpu},
    {"node_bandwidth_limit", FaultKind::kNodeBandwidthLimit},
    {"crash", FaultKind::kCrash},
    {"hang", FaultKind::kHang},
    {"checkpoint", FaultKind::kCheckpoint},
    {"oom", FaultKind::kOom}};
const std::pair<const char*, HangMode> kHangModes[] = {
    {"sigstop", HangMode::kSigstop},
    {"busy_loop", HangMode::kBusyLoop},
    {"blocked_io", HangMode::kBlockedIo},
    {"link_blackhole", HangMode::kLinkBlackhole},
    {"all_wait", HangMode::kAllWait}};

template <typename E, size_t N>
std::string_view EnumName(E value,
                          const std::pair<const char*, E> (&table)[N]) {
  for (const auto& [name, v] : table)
    if (v == value) return name;
  return "?";
}

Resources ParseResources(const json& j, const std::string& path) {
  Obj o(j, path);
  Resources r;
  if (o.Has("cpu_limit_cores"))
    r.cpu_limit_cores =
        Positive(o.Num("cpu_limit_cores"), o.Path("cpu_limit_cores"));
  if (o.Has("memory_limit_bytes"))
    r.memory_limit_bytes = static_cast<uint64_t>(
        AtLeast(o.Int("memory_limit_bytes"), 1, o.Path("memory_limit_bytes")));
  o.RejectUnknown();
  return r;
}

void CheckPlaceholders(const std::string& text, const std::string& path) {
  for (const std::string& name : UnknownPlaceholders(text)) {
    std::string known;
    for (const std::string& n : PlaceholderNames())
      known += (known.empty() ? "" : ", ") + n;
    Fail(path, "unknown placeholder ${" + name + "} (one of: " + known + ")");
  }
}

std::optional<Program> ParseProgram(const json& j, const std::string& path) {
  Obj o(j, path);
  Program p;
  const json& argv = o.At("argv");
  if (!argv.is_array() || argv.empty())
    Fail(o.Path("argv"), "must be a non-empty array of strings");
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string at = o.Path("argv") + "[" + std::to_string(i) + "]";
    if (!argv[i].is_string())
      Fail(at, "must be a string, got " + argv[i].dump());
    p.argv.push_back(argv[i].get<std::string>());
    CheckPlaceholders(p.argv.back(), at);
  }
  if (p.argv[0].empty()) Fail(o.Path("argv") + "[0]", "must not be empty");
  if (o.Has("env")) {
    const json& env = o.At("env");
    if (!env.is_object()) Fail(o.Path("env"), "must be an object of strings");
    for (const auto& [k, v] : env.items()) {
      const std::string at = o.Path("env") + "." + k;
      if (k.empty() || k.find('=') != std::string::npos)
        Fail(at, "is not a valid environment variable name");
      if (!v.is_string()) Fail(at, "must be a string, got " + v.dump());
      p.env.emplace_back(k, v.get<std::string>());
      CheckPlaceholders(p.env.back().second, at);
    }
  }
  o.RejectUnknown();
  return p;
}

// The second-edition keys: kind-specific counts and sizes, and the program.
void ParseJobKindFields(Obj& o, Job& job) {
  job.chief = AtLeast(o.Int("chief", 0), 0, o.Path("chief"));
  job.evaluator = Replicas(o.Int("evaluator", 0), 0, o.Path("evaluator"));
  if (job.chief > 1)
    Fail(o.Path("chief"), "must be 0 or 1 (one chief per job, as in TFJob)");
  if (o.Has("gradient_bytes"))
    job.gradient_bytes =
        AtLeast(o.Int("gradient_bytes"), 1, o.Path("gradient_bytes"));
  if (o.Has("program"))
    job.program = ParseProgram(o.At("program"), o.Path("program"));
  const bool builtin = !job.program.has_value();
  switch (job.kind) {
    case JobKind::kAllreduce:
      if (job.ps != 0)
        Fail(o.Path("ps"), "must be 0 for an allreduce job (it has no PS)");
      if (job.evaluator != 0)
        Fail(o.Path("evaluator"), "must be 0 for an allreduce job");
      if (!job.variables.empty())
        Fail(o.Path("variables"),
             "an allreduce job has no PS variables; use gradient_bytes");
      if (builtin && job.gradient_bytes == 0)
        Fail(o.Path("gradient_bytes"), "is required for an allreduce job");
      if (job.workers + job.chief < 2)
        Fail(o.Path("workers"), "an allreduce ring needs at least 2 ranks");
      break;
    case JobKind::kPsAsync:
    case JobKind::kPsSync:
      if (job.gradient_bytes != 0)
        Fail(o.Path("gradient_bytes"),
             "only for allreduce jobs (PS jobs use variables)");
      if (job.kind == JobKind::kPsSync && builtin && job.variables.empty())
        Fail(o.Path("variables"),
             "a ps_sync job needs variables (its barrier lives on PS 0)");
      break;
  }
}

Job ParseJob(const json& j, const std::string& path) {
  Obj o(j, path);
  Job job;
  job.namespace_name = o.Str("namespace", "default");
  job.name = o.Str("name");
  job.labels = ParseEnum(o.Str("labels", "kubeflow"), kLabelStyles,
                         o.Path("labels"), "label style");
  job.kind = ParseEnum(o.Str("kind", "ps_async"), kJobKinds, o.Path("kind"),
                       "job kind");
  // An allreduce job has no PS unless the scenario (wrongly) asks for some.
  job.ps = Replicas(o.Int("ps", job.kind == JobKind::kAllreduce ? 0 : 1), 0,
                    o.Path("ps"));
  job.workers = Replicas(o.Int("workers", 1), 1, o.Path("workers"));
  job.port = AtLeast(o.Int("port", 2222), 1, o.Path("port"));
  if (job.port > 65535) Fail(o.Path("port"), "must be <= 65535");
  // 0: free-running, steps back to back (DESIGN.md, third edition).
  job.step_ms = AtLeast(o.Int("step_ms", 1000), 0, o.Path("step_ms"));
  job.compute_ms = AtLeast(o.Int("compute_ms", 0), 0, o.Path("compute_ms"));
  job.compute_on = ParseEnum(o.Str("compute_on", "cpu"), kComputeOn,
                             o.Path("compute_on"), "compute device");

  std::set<std::string> var_names;
  if (o.Has("variables")) {
    const json& vars = o.At("variables");
    if (!vars.is_array()) Fail(o.Path("variables"), "must be an array");
    for (size_t i = 0; i < vars.size(); ++i) {
      Obj v(vars[i], o.Path("variables") + "[" + std::to_string(i) + "]");
      std::string name = v.Str("name");
      uint64_t bytes = AtLeast(v.Int("bytes"), 1, v.Path("bytes"));
      bool expand = v.Has("count");
      int64_t count = expand ? AtLeast(v.Int("count"), 1, v.Path("count")) : 1;
      v.RejectUnknown();
      // A worker requests each variable every step.
      if (count > kMaxVariables - static_cast<int64_t>(job.variables.size()))
        Fail(v.Path("count"), "more than " + std::to_string(kMaxVariables) +
                                  " variables in the job, got " +
                                  std::to_string(count) + " here");
      for (int64_t k = 0; k < count; ++k) {
        std::string full = expand ? name + "_" + std::to_string(k) : name;
        if (!var_names.insert(full).second)
          Fail(v.Path("name"), "duplicate variable name \"" + full + "\"");
        job.variables.push_back({full, bytes});
      }
    }
  }
  if (!job.variables.empty() && job.ps < 1)
    Fail(o.Path("ps"), "must be >= 1 when the job has variables");

  if (o.Has("placement")) {
    Obj p(o.At("placement"), o.Path("placement"));
    job.placement.strategy =
        ParseEnum(p.Str("strategy", "round_robin"), kStrategies,
                  p.Path("strategy"), "strategy");
    job.placement.min_slice_bytes =
        AtLeast(p.Int("min_slice_bytes", 262144), 1, p.Path("min_slice_bytes"));
    if (p.Has("shards"))
      job.placement.shards = AtLeast(p.Int("shards"), 1, p.Path("shards"));
    p.RejectUnknown();
  }
  if (o.Has("resources")) {
    Obj r(o.At("resources"), o.Path("resources"));
    if (r.Has("ps"))
      job.ps_resources = ParseResources(r.At("ps"), r.Path("ps"));
    if (r.Has("worker"))
      job.worker_resources = ParseResources(r.At("worker"), r.Path("worker"));
    if (r.Has("chief"))
      job.chief_resources = ParseResources(r.At("chief"), r.Path("chief"));
    if (r.Has("evaluator"))
      job.evaluator_resources =
          ParseResources(r.At("evaluator"), r.Path("evaluator"));
    r.RejectUnknown();
  }
  for (const char* key : kJobClusterKeys)
    if (o.Has(key)) ParseJobClusterKey(key, o.At(key), o.Path(key), &job);
  ParseJobKindFields(o, job);
  o.RejectUnknown();
  return job;
}

Fault ParseFault(const json& j, const std::string& path) {
  Obj o(j, path);
  Fault f;
  f.kind = ParseEnum(o.Str("kind"), kFaultKinds, o.Path("kind"), "fault kind");
  if (f.kind == FaultKind::kNodeBandwidthLimit)
    f.node = o.Str("node");
  else
    f.pod = o.Str("pod");
  f.start_s = NonNegative(o.Num("start_s", 0), o.Path("start_s"));
  switch (f.kind) {
    case FaultKind::kCpuLimit:
      f.cores = Positive(o.Num("cores"), o.Path("cores"));
      break;
    case FaultKind::kCpuHog:
      f.threads = AtLeast(o.Int("threads", 1), 1, o.Path("threads"));
      if (f.threads > 16) Fail(o.Path("threads"), "must be <= 16");
      break;
    case FaultKind::kBandwidthLimit:
    case FaultKind::kNodeBandwidthLimit:
      f.mbit = Positive(o.Num("mbit"), o.Path("mbit"));
      break;
    case FaultKind::kMemoryFill:
      f.ratio_of_limit =
          Positive(o.Num("ratio_of_limit"), o.Path("ratio_of_limit"));
      if (f.ratio_of_limit > 2) Fail(o.Path("ratio_of_limit"), "must be <= 2");
      break;
    case FaultKind::kInputRead:
      f.bytes_per_step =
          AtLeast(o.Int("bytes_per_step"), 1, o.Path("bytes_per_step"));
      f.mbit = Positive(o.Num("mbit"), o.Path("mbit"));
      break;
    case FaultKind::kGpu:
      f.utilization = NonNegative(o.Num("utilization"), o.Path("utilization"));
      if (f.utilization > 1)
        Fail(o.Path("utilization"), "must be <= 1 (a ratio)");
      f.memory_bytes =
          AtLeast(o.Int("memory_bytes", 0), 0, o.Path("memory_bytes"));
      // NVIDIA's Xid codes are small positive numbers.
      f.xid = static_cast<int>(AtLeast(o.Int("xid", 0), 0, o.Path("xid")));
      if (f.xid > 65535) Fail(o.Path("xid"), "must be <= 65535");
      break;
    case FaultKind::kCrash:
      // What a container's main process can exit with (0 is a clean exit,
      // not a crash).
      f.exit_code = AtLeast(o.Int("exit_code", 1), 1, o.Path("exit_code"));
      if (f.exit_code > 255) Fail(o.Path("exit_code"), "must be <= 255");
      [[fallthrough]];
    case FaultKind::kOom:
      f.every_s = NonNegative(o.Num("every_s", 0), o.Path("every_s"));
      if (f.every_s > 0 && f.every_s < 1)
        Fail(o.Path("every_s"), "must be 0 (once) or >= 1");
      break;
    case FaultKind::kHang:
      f.hang_mode =
          ParseEnum(o.Str("mode"), kHangModes, o.Path("mode"), "hang mode");
      if (f.hang_mode == HangMode::kLinkBlackhole) {
        if (!o.Has("peer"))
          Fail(o.Path("peer"),
               "is required for mode link_blackhole (the pod at the link's "
               "other end)");
        f.peer = o.Str("peer");
        if (f.peer == f.pod) Fail(o.Path("peer"), "must not be the pod itself");
      } else if (o.Has("peer")) {
        Fail(o.Path("peer"), "only for mode link_blackhole");
      }
      break;
    case FaultKind::kCheckpoint:
      f.bytes = AtLeast(o.Int("bytes"), 1, o.Path("bytes"));
      // The pod's disk write rate (0: the disk's own).
      f.mbit = o.Has("mbit") ? Positive(o.Num("mbit"), o.Path("mbit")) : 0;
      break;
  }
  if (f.kind == FaultKind::kHang || f.kind == FaultKind::kCheckpoint)
    f.duration_s = NonNegative(o.Num("duration_s", 0), o.Path("duration_s"));
  o.RejectUnknown();
  return f;
}

std::vector<Expectation> ParseExpectations(Obj& o, const std::string& key) {
  std::vector<Expectation> out;
  if (!o.Has(key)) return out;
  const json& list = o.At(key);
  if (!list.is_array()) Fail(key, "must be an array");
  for (size_t i = 0; i < list.size(); ++i) {
    Obj e(list[i], key + "[" + std::to_string(i) + "]");
    Expectation x;
    x.kind = e.Str("kind");
    // A pod's diagnosis, a node-level one (second edition) or a job-level
    // one (third edition).
    const int given = e.Has("pod") + e.Has("node") + e.Has("job");
    if (given > 1)
      Fail(e.Path("pod"), e.Has("job") ? "give one of pod, node or job"
                                       : "give either pod or node, not both");
    if (given == 0)
      Fail(e.Path("pod"),
           "is required (or node, for a node-level diagnosis, or job, for a "
           "job-level one)");
    if (e.Has("node"))
      x.node = e.Str("node");
    else if (e.Has("job"))
      x.job = e.Str("job");
    else
      x.pod = e.Str("pod");
    if (e.Has("severity")) {
      x.severity = e.Str("severity");
      if (x.severity != "info" && x.severity != "warning" &&
          x.severity != "critical")
        Fail(e.Path("severity"),
             "must be \"info\", \"warning\" or \"critical\"");
    }
    const auto& kinds = DiagnosisKinds();
    if (std::find(kinds.begin(), kinds.end(), x.kind) == kinds.end())
      Fail(e.Path("kind"), "unknown diagnosis kind \"" + x.kind + "\"");
    e.RejectUnknown();
    out.push_back(x);
  }
  return out;
}

}  // namespace

std::string_view LabelStyleName(LabelStyle s) {
  return EnumName(s, kLabelStyles);
}
std::string_view StrategyName(Strategy s) { return EnumName(s, kStrategies); }
std::string_view FaultKindName(FaultKind k) { return EnumName(k, kFaultKinds); }
bool KillsPodProcess(FaultKind k) {
  return k == FaultKind::kCrash || k == FaultKind::kOom;
}
std::string_view HangModeName(HangMode m) { return EnumName(m, kHangModes); }
std::string_view PodRoleName(PodRole role) { return EnumName(role, kPodRoles); }
std::string_view JobKindName(JobKind k) { return EnumName(k, kJobKinds); }

std::vector<std::pair<PodRole, int>> Job::Replicas() const {
  return {{PodRole::kPs, ps},
          {PodRole::kWorker, workers},
          {ChiefRole(), chief},
          {PodRole::kEvaluator, evaluator}};
}

PodRole Job::ChiefRole() const {
  return kind == JobKind::kAllreduce ? PodRole::kMaster : PodRole::kChief;
}

Resources Job::ResourcesFor(PodRole role) const {
  switch (role) {
    case PodRole::kPs:
      return ps_resources;
    case PodRole::kChief:
    case PodRole::kMaster:
      return chief_resources.value_or(worker_resources);
    case PodRole::kEvaluator:
      return evaluator_resources.value_or(worker_resources);
    case PodRole::kWorker:
      break;
  }
  return worker_resources;
}

const Job* FindJob(const Scenario& s, const std::string& ns_name) {
  for (const Job& job : s.jobs)
    if (job.namespace_name + "/" + job.name == ns_name) return &job;
  return nullptr;
}

std::string Job::PodName(PodRole role, int index) const {
  return name + "-" + std::string(PodRoleName(role)) + "-" +
         std::to_string(index);
}

const std::vector<std::string>& DiagnosisKinds() {
  static const std::vector<std::string> kinds = [] {
    std::vector<std::string> all;
    for (const auto& d : trainscope::diagnosis::Detectors()) {
      all.emplace_back(d.kind);
    }
    return all;
  }();
  return kinds;
}

Scenario ParseScenario(const json& doc) {
  Obj o(doc, "");
  Scenario s;
  s.name = o.Str("name");
  s.duration_s = Positive(o.Num("duration_s", 60), "duration_s");
  s.interval_s = Positive(o.Num("interval_s", 5), "interval_s");
  // The step-rate check is on unless the scenario says why not.
  if (o.Has("skip_step_rate_check"))
    s.skip_step_rate_check = o.Str("skip_step_rate_check");
  if (o.Has("step_rates_may_withdraw"))
    s.step_rates_may_withdraw = o.Str("step_rates_may_withdraw");

  if (o.Has("nodes")) s.nodes = ParseNodes(o.At("nodes"));
  const json& jobs = o.At("jobs");
  if (!jobs.is_array() || jobs.empty())
    Fail("jobs", "must be a non-empty array");
  std::set<std::string> pods;
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::string path = "jobs[" + std::to_string(i) + "]";
    Job job = ParseJob(jobs[i], path);
    for (const auto& [role, n] : job.Replicas()) {
      for (int k = 0; k < n; ++k) {
        // Faults and expectations name pods without a namespace, so pod
        // names must be unique across the whole scenario.
        if (!pods.insert(job.PodName(role, k)).second)
          Fail(path + ".name", "duplicate pod name \"" + job.PodName(role, k) +
                                   "\" (job names must be unique)");
      }
    }
    s.jobs.push_back(std::move(job));
  }

  if (o.Has("faults")) {
    const json& faults = o.At("faults");
    if (!faults.is_array()) Fail("faults", "must be an array");
    for (size_t i = 0; i < faults.size(); ++i) {
      std::string path = "faults[" + std::to_string(i) + "]";
      Fault f = ParseFault(faults[i], path);
      if (f.node.empty() && !pods.count(f.pod))
        Fail(path + ".pod", "no pod named \"" + f.pod + "\" in the scenario");
      if (!f.peer.empty() && !pods.count(f.peer))
        Fail(path + ".peer", "no pod named \"" + f.peer + "\" in the scenario");
      if (f.start_s >= s.duration_s)
        Fail(path + ".start_s", "must be < duration_s");
      s.faults.push_back(f);
    }
  }
  s.expect = ParseExpectations(o, "expect");
  s.allow = ParseExpectations(o, "allow");
  for (const char* key : {"expect", "allow"}) {
    const auto& list = std::string(key) == "expect" ? s.expect : s.allow;
    for (size_t i = 0; i < list.size(); ++i)
      if (!list[i].job.empty()) {
        if (!FindJob(s, list[i].job))
          Fail(std::string(key) + "[" + std::to_string(i) + "].job",
               "no job \"" + list[i].job +
                   "\" in the scenario (namespace/name)");
      } else if (list[i].node.empty() && !pods.count(list[i].pod)) {
        Fail(std::string(key) + "[" + std::to_string(i) + "].pod",
             "no pod named \"" + list[i].pod + "\" in the scenario");
      }
  }
  // memory_fill is a ratio of the pod's memory limit, and oom allocates
  // past it: the limit must exist.
  for (size_t i = 0; i < s.faults.size(); ++i) {
    if (s.faults[i].kind != FaultKind::kMemoryFill &&
        s.faults[i].kind != FaultKind::kOom)
      continue;
    bool limited = false;
    for (const Job& job : s.jobs)
      for (const auto& [role, n] : job.Replicas())
        for (int k = 0; k < n; ++k)
          if (job.PodName(role, k) == s.faults[i].pod)
            limited = job.ResourcesFor(role).memory_limit_bytes.has_value();
    if (!limited)
      Fail("faults[" + std::to_string(i) + "].pod",
           std::string(FaultKindName(s.faults[i].kind)) +
               " needs a memory_limit_bytes for the pod's role");
  }
  ValidateCluster(s, pods);
  o.RejectUnknown();
  return s;
}

Scenario ParseScenarioText(std::string_view text) {
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) throw ScenarioError("<file>: not valid JSON");
  return ParseScenario(doc);
}

Scenario LoadScenarioFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw ScenarioError(path + ": cannot open the scenario file");
  std::stringstream buf;
  buf << in.rdbuf();
  try {
    return ParseScenarioText(buf.str());
  } catch (const ScenarioError& e) {
    throw ScenarioError(path + ": " + e.what());
  }
}

}  // namespace trainsim
