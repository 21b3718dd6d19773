#include "step_rates.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

namespace trainsim {

using ojson = nlohmann::ordered_json;

std::optional<double> Median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

namespace {

double Round(double v, int digits) {
  const double f = std::pow(10.0, digits);
  return std::round(v * f) / f;
}

ojson Opt(const std::optional<double>& v, int digits) {
  return v ? ojson(Round(*v, digits)) : ojson(nullptr);
}

}  // namespace

StepRateTracker::StepRateTracker(const Scenario& scenario)
    : scenario_(scenario) {
  // A pod that crashes (the crash and oom faults) is down part of the time:
  // its rate over the last minute mixes the two, so it is counted, not
  // checked.
  std::set<std::string> crashing;
  for (const Fault& f : scenario.faults)
    if (KillsPodProcess(f.kind)) crashing.insert(f.pod);
  for (const Job& job : scenario.jobs) {
    // A hang or checkpoint stops the job's steps (a synchronous job's all,
    // an async one's through its PS) for part of the minute: the same.
    const bool halted = std::any_of(
        scenario.faults.begin(), scenario.faults.end(), [&job](const Fault& f) {
          if (f.kind != FaultKind::kHang && f.kind != FaultKind::kCheckpoint)
            return false;
          for (const auto& [role, n] : job.Replicas())
            for (int k = 0; k < n; ++k)
              if (job.PodName(role, k) == f.pod) return true;
          return false;
        });
    JobCount count{job.namespace_name, job.name, {}, false};
    const PodInfo info{job.namespace_name, job.name};
    if (job.program && job.chief > 0 && job.ChiefRole() == PodRole::kChief) {
      // TF2's ClusterCoordinator schedules every step on some worker and
      // counts them; the workers count none.
      count.pods.push_back(job.PodName(PodRole::kChief, 0));
      count.by_coordinator = true;
      if (enabled() && !halted)
        checked_jobs_.push_back(job.namespace_name + "/" + job.name);
    } else {
      // A built-in job's chief, master and evaluator do not train; a real
      // PyTorchJob's master is rank 0 of the ring.
      if (job.program && job.chief > 0)
        count.pods.push_back(job.PodName(PodRole::kMaster, 0));
      for (int k = 0; k < job.workers; ++k)
        count.pods.push_back(job.PodName(PodRole::kWorker, k));
      for (const std::string& pod : count.pods) {
        workers_[pod] = info;
        if (enabled() && !crashing.count(pod) && !halted)
          checked_.push_back(pod);
      }
    }
    counters_.insert(count.pods.begin(), count.pods.end());
    job_counts_.push_back(std::move(count));
  }
}

void StepRateTracker::ObserveTruth(const std::string& pod, double now_s,
                                   uint64_t steps,
                                   std::optional<double> last_step_s) {
  if (!counters_.count(pod)) return;
  auto& samples = truth_[pod];
  if (!samples.empty() && samples.back().t >= now_s) return;
  samples.push_back({now_s, steps, last_step_s});
}

void StepRateTracker::ObserveAgent(const nlohmann::json& report, double now_s) {
  if (!report.is_object() || !report.contains("jobs") ||
      !report["jobs"].is_array())
    return;
  if (std::find(polls_.begin(), polls_.end(), now_s) == polls_.end())
    polls_.push_back(now_s);
  for (const auto& job : report["jobs"]) {
    if (!job.is_object()) continue;
    // A cluster's agents each total their own node's workers: one poll's
    // reports add up to the job's.
    if (job.contains("steps_per_second") &&
        job["steps_per_second"].is_number() && job.contains("namespace") &&
        job["namespace"].is_string() && job.contains("training_job") &&
        job["training_job"].is_string())
      agent_jobs_[job["namespace"].get<std::string>() + "/" +
                  job["training_job"].get<std::string>()][now_s] +=
          job["steps_per_second"].get<double>();
    if (!job.contains("worker_steps_per_second") ||
        !job["worker_steps_per_second"].is_object())
      continue;
    for (const auto& [pod, rate] : job["worker_steps_per_second"].items()) {
      if (!rate.is_number() || !workers_.count(pod)) continue;
      const double r = rate.get<double>();
      if (std::isfinite(r) && r >= 0) agent_[pod][now_s] = r;
    }
  }
}

double StepRateTracker::End() const {
  double end = 0;
  for (const auto& [pod, samples] : truth_)
    if (!samples.empty()) end = std::max(end, samples.back().t);
  for (double t : polls_) end = std::max(end, t);
  return end;
}

std::pair<double, double> StepRateTracker::LastSpan() const {
  const double end = End();
  return {std::max(end - kLastS, kTruthWarmupS), end};
}

std::optional<std::pair<double, double>> StepRateTracker::BeforeFaultsSpan()
    const {
  if (scenario_.faults.empty()) return std::nullopt;
  double first = std::numeric_limits<double>::infinity();
  for (const Fault& f : scenario_.faults) first = std::min(first, f.start_s);
  // A fault from (nearly) the start leaves no clean stretch to measure.
  if (first <= kTruthWarmupS + 1) return std::nullopt;
  return std::make_pair(kTruthWarmupS, first);
}

std::map<double, double> StepRateTracker::WindowRates(const std::string& pod,
                                                      double from,
                                                      double to) const {
  std::map<double, double> out;
  auto it = truth_.find(pod);
  if (it == truth_.end()) return out;
  const auto& s = it->second;
  // A span shorter than a window (a fault soon after the start) is one
  // window.
  const double window = std::min(kWindowS, to - from);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].t < from || s[i].t > to) continue;
    std::optional<size_t> j;
    for (size_t k = 0; k < i; ++k)
      if (s[k].t >= from && s[k].t <= s[i].t - window + 1e-9) j = k;
    if (!j) continue;
    const TruthSample &a = s[*j], &b = s[i];
    if (b.steps < a.steps) continue;  // the pod restarted
    if (b.steps == a.steps) {
      out[b.t] = 0;
      continue;
    }
    // Between completions when both are stamped, else between the polls.
    const double dt = a.last_step_s && b.last_step_s
                          ? *b.last_step_s - *a.last_step_s
                          : b.t - a.t;
    if (dt > 0) out[b.t] = static_cast<double>(b.steps - a.steps) / dt;
  }
  return out;
}

void StepRateTracker::Compare(const std::map<double, double>* estimates,
                              Comparison& c) const {
  const auto [from, to] = LastSpan();
  const double agent_from = std::max(to - kLastS, kAgentWarmupS);
  size_t polls = 0;
  std::vector<double> seen;
  for (double t : polls_) {
    if (t < agent_from || t > to) continue;
    ++polls;
    if (!estimates) continue;
    auto e = estimates->find(t);
    if (e != estimates->end()) seen.push_back(e->second);
  }
  c.agent_coverage = polls ? static_cast<double>(seen.size()) / polls : 0.0;
  if (c.agent_coverage >= kMinCoverage) c.agent_rate = Median(seen);
  // Where the scenario allows it, a rate withdrawn in most polls is the
  // agent saying it cannot tell; what it did report must still be right.
  if (!c.agent_rate && !scenario_.step_rates_may_withdraw.empty()) {
    c.withdrawn = true;
    c.agent_rate = Median(seen);
  }
  if (c.true_rate && c.agent_rate && *c.true_rate > 0)
    c.error = (*c.agent_rate - *c.true_rate) / *c.true_rate;
  if (!c.true_rate) {
    c.passed = false;
    c.why = "no ground truth (no step counts over a window)";
  } else if (*c.true_rate * kLastS < 1) {
    // Under a step a minute: no period to see, so no estimate is right.
    c.passed = !c.agent_rate;
    if (!c.passed) c.why = "an estimate for a worker that made no steps";
  } else if (!c.agent_rate) {
    // No estimate in any poll: right only where the scenario allows it.
    c.passed = c.withdrawn;
    if (!c.passed)
      c.why = fmt::format("no estimate (in {:.0f}% of the polls)",
                          c.agent_coverage * 100);
  } else if (std::fabs(*c.error) > kTolerance) {
    c.passed = false;
    c.why = fmt::format("off by {:+.1f}%", *c.error * 100);
    if (c.withdrawn)
      c.why += fmt::format(" where given (in {:.0f}% of the polls)",
                           c.agent_coverage * 100);
  }
  if (!c.checked) c.passed = true;
}

std::vector<StepRateTracker::WorkerFigures> StepRateTracker::Workers() const {
  std::vector<WorkerFigures> out;
  const auto [from, to] = LastSpan();
  for (const auto& [pod, info] : workers_) {
    WorkerFigures w;
    w.pod = pod;
    w.namespace_name = info.namespace_name;
    w.job = info.job;
    w.checked =
        std::find(checked_.begin(), checked_.end(), pod) != checked_.end();
    std::vector<double> rates;
    for (const auto& [t, r] : WindowRates(pod, from, to)) rates.push_back(r);
    w.true_rate = Median(rates);
    auto a = agent_.find(pod);
    Compare(a == agent_.end() ? nullptr : &a->second, w);
    out.push_back(w);
  }
  return out;
}

bool StepRateTracker::Passed() const {
  for (const WorkerFigures& w : Workers())
    if (!w.passed) return false;
  for (const JobFigures& j : Jobs())
    if (!j.check.passed) return false;
  return true;
}

namespace {

// `e` (what is compared) with the comparison's figures after it.
ojson WithFigures(ojson e, const StepRateTracker::Comparison& c) {
  e["true_steps_per_second"] = Opt(c.true_rate, 4);
  e["agent_steps_per_second"] = Opt(c.agent_rate, 4);
  e["error_pct"] = c.error ? ojson(Round(*c.error * 100, 1)) : ojson(nullptr);
  if (c.withdrawn) {
    e["withdrawn"] = true;
    e["agent_coverage"] = Round(c.agent_coverage, 2);
  }
  e["passed"] = c.passed;
  if (!c.passed) e["why"] = c.why;
  return e;
}

// One line of the table.
std::string Row(const std::string& name, const StepRateTracker::Comparison& c) {
  auto num = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.3f}", *v) : std::string("-");
  };
  return fmt::format(
      "{:<28} {:>14} {:>14} {:>8}  {}\n", name, num(c.true_rate),
      num(c.agent_rate),
      c.error ? fmt::format("{:+.1f}", *c.error * 100) : std::string("-"),
      !c.checked ? ""
      : c.passed ? (c.withdrawn ? fmt::format("ok: withdrawn (given in {:.0f}% "
                                              "of the polls)",
                                              c.agent_coverage * 100)
                                : std::string("ok"))
                 : "FAIL: " + c.why);
}

}  // namespace

ojson StepRateTracker::ResultJson() const {
  ojson workers = ojson::array();
  bool passed = true;
  for (const WorkerFigures& w : Workers()) {
    passed &= w.passed;
    if (!w.checked) continue;
    workers.push_back(WithFigures({{"pod", w.pod}}, w));
  }
  ojson jobs = ojson::array();
  for (const JobFigures& f : Jobs()) {
    passed &= f.check.passed;
    if (!f.check.checked) continue;
    jobs.push_back(WithFigures(
        {{"namespace", f.namespace_name}, {"training_job", f.job}}, f.check));
  }
  ojson j{{"checked", enabled()}, {"passed", passed}};
  if (!enabled()) j["skipped"] = scenario_.skip_step_rate_check;
  if (!scenario_.step_rates_may_withdraw.empty())
    j["may_withdraw"] = scenario_.step_rates_may_withdraw;
  j["workers"] = workers;
  if (!jobs.empty()) j["jobs"] = jobs;
  return j;
}

std::string StepRateTracker::Table() const {
  const auto [from, to] = LastSpan();
  std::string out = fmt::format(
      "\nSteps per second per worker (median over {:.0f}-{:.0f} s; truth "
      "counted by the pod processes):\n",
      from, to);
  if (!enabled())
    out += "  not checked: " + scenario_.skip_step_rate_check + "\n";
  if (!scenario_.step_rates_may_withdraw.empty())
    out += "  may be withdrawn: " + scenario_.step_rates_may_withdraw + "\n";
  out += fmt::format("{:<28} {:>14} {:>14} {:>8}\n", "pod", "true steps/s",
                     "agent steps/s", "error %");
  for (const WorkerFigures& w : Workers()) out += Row(w.pod, w);
  for (const JobFigures& f : Jobs())
    if (f.check.checked) out += Row(f.job + " (job, coordinator)", f.check);
  return out;
}

std::optional<double> StepRateTracker::JobRate(const JobCount& count,
                                               double from, double to) const {
  std::map<double, std::pair<double, size_t>> sums;  // end -> (sum, pods)
  for (const std::string& pod : count.pods)
    for (const auto& [t, r] : WindowRates(pod, from, to)) {
      sums[t].first += r;
      ++sums[t].second;
    }
  std::vector<double> rates;
  for (const auto& [t, sum] : sums)
    if (sum.second == count.pods.size()) rates.push_back(sum.first);
  return Median(rates);
}

std::vector<StepRateTracker::JobFigures> StepRateTracker::Jobs() const {
  std::vector<JobFigures> out;
  const auto [from, to] = LastSpan();
  const auto before = BeforeFaultsSpan();
  for (const JobCount& count : job_counts_) {
    JobFigures f;
    f.namespace_name = count.namespace_name;
    f.job = count.job;
    f.last_minute = JobRate(count, from, to);
    if (before) f.before_faults = JobRate(count, before->first, before->second);
    auto a = agent_jobs_.find(count.namespace_name + "/" + count.job);
    if (a != agent_jobs_.end()) {
      std::vector<double> v;
      for (const auto& [t, r] : a->second)
        if (t >= std::max(to - kLastS, kAgentWarmupS) && t <= to)
          v.push_back(r);
      f.agent_last_minute = Median(v);
    }
    // Not a job its faults halt (checked_jobs_): its steps stop for part
    // of the minute while the agent's rate still holds the steps before.
    f.check.checked = std::find(checked_jobs_.begin(), checked_jobs_.end(),
                                count.namespace_name + "/" + count.job) !=
                      checked_jobs_.end();
    f.check.true_rate = f.last_minute;
    Compare(a == agent_jobs_.end() ? nullptr : &a->second, f.check);
    out.push_back(f);
  }
  return out;
}

}  // namespace trainsim
