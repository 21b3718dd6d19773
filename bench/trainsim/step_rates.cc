#include "step_rates.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

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
  for (const Job& job : scenario.jobs) {
    // Real programs count their steps their own way (and the chief,
    // master and evaluator do not train): only the built-in workers.
    if (job.program) continue;
    for (int k = 0; k < job.workers; ++k) {
      const std::string pod = job.PodName(PodRole::kWorker, k);
      workers_[pod] = {job.namespace_name, job.name, true};
      if (enabled()) checked_.push_back(pod);
    }
  }
}

void StepRateTracker::ObserveTruth(const std::string& pod, double now_s,
                                   uint64_t steps,
                                   std::optional<double> last_step_s) {
  if (!workers_.count(pod)) return;
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
    if (job.contains("steps_per_second") &&
        job["steps_per_second"].is_number() && job.contains("namespace") &&
        job["namespace"].is_string() && job.contains("training_job") &&
        job["training_job"].is_string())
      agent_jobs_[job["namespace"].get<std::string>() + "/" +
                  job["training_job"].get<std::string>()][now_s] =
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

std::vector<StepRateTracker::WorkerFigures> StepRateTracker::Workers() const {
  std::vector<WorkerFigures> out;
  const auto [from, to] = LastSpan();
  const double agent_from = std::max(to - kLastS, kAgentWarmupS);
  for (const auto& [pod, info] : workers_) {
    WorkerFigures w;
    w.pod = pod;
    w.namespace_name = info.namespace_name;
    w.job = info.job;
    w.checked = enabled();
    std::vector<double> rates;
    for (const auto& [t, r] : WindowRates(pod, from, to)) rates.push_back(r);
    w.true_rate = Median(rates);
    size_t polls = 0;
    std::vector<double> estimates;
    auto a = agent_.find(pod);
    for (double t : polls_) {
      if (t < agent_from || t > to) continue;
      ++polls;
      if (a == agent_.end()) continue;
      auto e = a->second.find(t);
      if (e != a->second.end()) estimates.push_back(e->second);
    }
    w.agent_coverage =
        polls ? static_cast<double>(estimates.size()) / polls : 0.0;
    if (w.agent_coverage >= kMinCoverage) w.agent_rate = Median(estimates);
    if (w.true_rate && w.agent_rate && *w.true_rate > 0)
      w.error = (*w.agent_rate - *w.true_rate) / *w.true_rate;
    if (!w.true_rate) {
      w.passed = false;
      w.why = "no ground truth (no step counts over a window)";
    } else if (*w.true_rate * kLastS < 1) {
      // Under a step a minute: no period to see, so no estimate is right.
      w.passed = !w.agent_rate;
      if (!w.passed) w.why = "an estimate for a worker that made no steps";
    } else if (!w.agent_rate) {
      w.passed = false;
      w.why = fmt::format("no estimate (in {:.0f}% of the polls)",
                          w.agent_coverage * 100);
    } else if (std::fabs(*w.error) > kTolerance) {
      w.passed = false;
      w.why = fmt::format("off by {:+.1f}%", *w.error * 100);
    }
    if (!w.checked) w.passed = true;
    out.push_back(w);
  }
  return out;
}

bool StepRateTracker::Passed() const {
  for (const WorkerFigures& w : Workers())
    if (!w.passed) return false;
  return true;
}

ojson StepRateTracker::ResultJson() const {
  ojson workers = ojson::array();
  bool passed = true;
  for (const WorkerFigures& w : Workers()) {
    passed &= w.passed;
    if (!w.checked) continue;
    ojson e{{"pod", w.pod},
            {"true_steps_per_second", Opt(w.true_rate, 4)},
            {"agent_steps_per_second", Opt(w.agent_rate, 4)},
            {"error_pct",
             w.error ? ojson(Round(*w.error * 100, 1)) : ojson(nullptr)},
            {"passed", w.passed}};
    if (!w.passed) e["why"] = w.why;
    workers.push_back(e);
  }
  ojson j{{"checked", enabled()}, {"passed", passed}};
  if (!enabled()) j["skipped"] = scenario_.skip_step_rate_check;
  j["workers"] = workers;
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
  out += fmt::format("{:<28} {:>14} {:>14} {:>8}\n", "pod", "true steps/s",
                     "agent steps/s", "error %");
  for (const WorkerFigures& w : Workers()) {
    auto num = [](const std::optional<double>& v) {
      return v ? fmt::format("{:.3f}", *v) : std::string("-");
    };
    out += fmt::format(
        "{:<28} {:>14} {:>14} {:>8}  {}\n", w.pod, num(w.true_rate),
        num(w.agent_rate),
        w.error ? fmt::format("{:+.1f}", *w.error * 100) : std::string("-"),
        !w.checked ? ""
        : w.passed ? "ok"
                   : "FAIL: " + w.why);
  }
  return out;
}

std::vector<StepRateTracker::JobFigures> StepRateTracker::Jobs() const {
  // The job's rate at a poll: the sum of its workers' window rates there.
  auto total = [&](const Job& job, double from,
                   double to) -> std::optional<double> {
    std::map<double, std::pair<double, int>> sums;  // end -> (sum, workers)
    for (int k = 0; k < job.workers; ++k)
      for (const auto& [t, r] :
           WindowRates(job.PodName(PodRole::kWorker, k), from, to)) {
        sums[t].first += r;
        ++sums[t].second;
      }
    std::vector<double> rates;
    for (const auto& [t, sum] : sums)
      if (sum.second == job.workers) rates.push_back(sum.first);
    return Median(rates);
  };
  std::vector<JobFigures> out;
  const auto [from, to] = LastSpan();
  const auto before = BeforeFaultsSpan();
  for (const Job& job : scenario_.jobs) {
    if (job.program) continue;
    JobFigures f{job.namespace_name, job.name, total(job, from, to),
                 std::nullopt, std::nullopt};
    if (before) f.before_faults = total(job, before->first, before->second);
    auto a = agent_jobs_.find(job.namespace_name + "/" + job.name);
    if (a != agent_jobs_.end()) {
      std::vector<double> v;
      for (const auto& [t, r] : a->second)
        if (t >= std::max(to - kLastS, kAgentWarmupS) && t <= to)
          v.push_back(r);
      f.agent_last_minute = Median(v);
    }
    out.push_back(f);
  }
  return out;
}

}  // namespace trainsim
