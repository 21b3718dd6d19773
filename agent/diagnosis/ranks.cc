#include "diagnosis/ranks.h"

#include <algorithm>
#include <cmath>
#include <functional>

#include "diagnosis/detectors.h"
#include "diagnosis/impact.h"

namespace trainscope::diagnosis {
namespace {

// One cause metric: how to read it from a pod and its floors.
struct MetricSpec {
  const char* cause;
  const char* metric;
  std::function<std::optional<double>(const PodStats&)> value;
  double enter;
  double exit;
};

std::optional<double> Share(const std::optional<double>& part,
                            const std::optional<double>& whole) {
  if (!part || !whole || *whole <= 0) return std::nullopt;
  return *part / *whole;
}

std::vector<MetricSpec> Metrics(const DiagnosisSettings& all) {
  const auto& r = all.rank_cause;
  const double min_periods = all.throttle.min_periods;
  return {
      {"cpu_throttled", "throttled_ratio",
       [min_periods](const PodStats& p) -> std::optional<double> {
         if (!p.cpu_periods || *p.cpu_periods < min_periods) return {};
         return p.throttled_ratio;
       },
       all.throttle.enter_ratio, all.throttle.exit_ratio},
      {"cpu_starved", "cpu_stall_ratio",
       [](const PodStats& p) { return p.cpu_pressure_ratio; },
       r.cpu_stall_enter, r.cpu_stall_exit},
      {"cpu_starved", "cpu_limit_use_ratio",
       [](const PodStats& p) { return Share(p.cpu_cores, p.cpu_limit_cores); },
       r.cpu_limit_use_enter, r.cpu_limit_use_exit},
      {"io_stall", "io_stall_ratio",
       [](const PodStats& p) { return p.io_pressure_ratio; },
       all.input_io.psi_enter, all.input_io.psi_exit},
      {"memory_pressure", "memory_stall_ratio",
       [](const PodStats& p) { return p.memory_pressure_ratio; },
       all.memory.psi_enter, all.memory.psi_exit},
      {"memory_pressure", "memory_limit_use_ratio",
       [](const PodStats& p) {
         return Share(p.memory_working_set_bytes, p.memory_limit_bytes);
       },
       all.memory.enter_ratio, all.memory.exit_ratio},
  };
}

// Ratio rule for 2-4 ranks, plus a robust z-score from robust_from ranks.
std::optional<StandOut> Compare(const MetricSpec& spec, double value,
                                const std::vector<double>& peers,
                                const RankCauseSettings& s) {
  if (peers.empty() || value < spec.exit) return std::nullopt;
  const double median = Median(peers);
  StandOut out{spec.cause,   spec.metric, value,        median,
               peers.size(), "ratio",     std::nullopt, Finding::Level::kHold};
  bool enter = value >= spec.enter && value >= s.ratio_factor * median;
  bool hold = value >= s.hold_factor * median && value > median;
  if (peers.size() + 1 >= s.robust_from) {
    std::vector<double> all = peers;
    all.push_back(value);
    const double center = Median(all);
    std::vector<double> deviations;
    for (double x : all) deviations.push_back(std::fabs(x - center));
    const double mad = std::max(
        {Median(deviations), s.mad_floor_ratio * center, s.mad_floor_absolute});
    const double z = (value - center) / (1.4826 * mad);
    out.rule = "robust_z";
    out.z = z;
    enter = enter && z >= s.z_enter;
    hold = hold && z >= s.z_exit;
  }
  if (!enter && !hold) return std::nullopt;
  out.level = enter ? Finding::Level::kEnter : Finding::Level::kHold;
  return out;
}

}  // namespace

bool IsRankRole(Role role) {
  return role == Role::kWorker || role == Role::kMaster;
}

std::vector<RankJob> AllreduceJobs(const WindowStats& stats) {
  using JobId = std::pair<std::string, std::string>;
  std::map<JobId, RankJob> jobs;
  std::map<JobId, bool> has_ps;
  for (const auto& [key, pod] : stats.pods) {
    const auto& m = pod.meta;
    if (m.training_job.empty()) continue;
    const JobId id{m.namespace_name, m.training_job};
    if (m.role == Role::kPs) has_ps[id] = true;
    if (!IsRankRole(m.role)) continue;
    RankJob& job = jobs[id];
    job.namespace_name = m.namespace_name;
    job.training_job = m.training_job;
    if (job.job_kind == JobKind::kUnknown) job.job_kind = m.job_kind;
    if (job.framework == Framework::kUnknown) job.framework = m.framework;
    job.ranks.push_back(&pod);
    double exchange = 0;
    bool any = false;
    for (const auto& [peer, rate] : pod.peer_rates) {
      const Role role = PeerRole(stats, peer);
      if (role == Role::kPs && !OfAnotherJob(stats, peer, m.training_job)) {
        has_ps[id] = true;
      }
      if (!IsRankRole(role) || OfAnotherJob(stats, peer, m.training_job))
        continue;
      exchange += rate.receive_bytes + rate.transmit_bytes;
      any = true;
    }
    if (any) job.exchange[key] = exchange;
  }
  std::vector<RankJob> out;
  for (auto& [id, job] : jobs) {
    if (has_ps[id]) continue;
    // No PS in sight is not yet allreduce: the PS may sit on another node
    // under a name this agent does not know. The ranks must talk to each
    // other, or the job kind must be one that has no PS.
    const bool collective_kind = job.job_kind == JobKind::kPyTorchJob ||
                                 job.job_kind == JobKind::kMPIJob ||
                                 job.framework == Framework::kPyTorch;
    if (job.exchange.empty() && !collective_kind) continue;
    std::sort(job.ranks.begin(), job.ranks.end(),
              [](const PodStats* a, const PodStats* b) {
                return a->meta.pod < b->meta.pod;
              });
    out.push_back(std::move(job));
  }
  return out;
}

std::vector<StandOut> CausesStandingOut(
    const PodStats& pod, const std::vector<const PodStats*>& peers,
    const DiagnosisSettings& all) {
  std::vector<StandOut> entering, holding;
  for (const auto& spec : Metrics(all)) {
    const std::optional<double> value = spec.value(pod);
    if (!value) continue;
    std::vector<double> peer_values;
    for (const PodStats* p : peers) {
      if (auto v = spec.value(*p)) peer_values.push_back(*v);
    }
    auto found = Compare(spec, *value, peer_values, all.rank_cause);
    if (!found) continue;
    (found->level == Finding::Level::kEnter ? entering : holding)
        .push_back(std::move(*found));
  }
  for (auto& h : holding) entering.push_back(std::move(h));
  return entering;
}

nlohmann::json CauseEvidence(const std::vector<StandOut>& causes) {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& c : causes) {
    nlohmann::json e = {{"cause", c.cause},
                        {"value", Round4(c.value)},
                        {"peer_median", Round4(c.peer_median)},
                        {"peers", c.peers},
                        {"rule", c.rule}};
    if (c.z) e["z"] = Round4(*c.z);
    out[c.metric] = std::move(e);
  }
  return out;
}

void SetCauseImpact(Diagnosis& d, const std::vector<StandOut>& causes) {
  auto beyond = [](const StandOut& c) {
    return std::max(0.0, c.value - c.peer_median);
  };
  double stall = 0;
  bool any_stall = false;
  for (const StandOut& c : causes) {
    if (c.metric != "cpu_stall_ratio" && c.metric != "io_stall_ratio" &&
        c.metric != "memory_stall_ratio")
      continue;
    stall += beyond(c);
    any_stall = true;
  }
  // Even a stall is a bound: a rank with slack in its step (waiting on
  // something else anyway) absorbs part of it.
  if (any_stall) {
    SetImpact(d, std::min(1.0, stall),
              "stall_beyond_peers" + std::string(kUpperBoundSuffix));
  } else if (!causes.empty()) {
    SetImpact(d, beyond(causes.front()),
              causes.front().metric + "_beyond_peers" +
                  std::string(kUpperBoundSuffix));
  }
}

}  // namespace trainscope::diagnosis
