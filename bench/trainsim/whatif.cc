#include "whatif.h"

#include <fmt/format.h>

#include <cmath>
#include <optional>
#include <stdexcept>

namespace trainsim {

using nlohmann::json;

namespace {

[[noreturn]] void Missing(const std::string& what) {
  throw std::runtime_error(what);
}

// The results' jobs[] entry of namespace/name.
const json& JobEntry(const json& results, const std::string& ns,
                     const std::string& name, const char* which) {
  if (results.contains("jobs") && results["jobs"].is_array())
    for (const json& j : results["jobs"])
      if (j.is_object() && j.value("namespace", "") == ns &&
          j.value("training_job", "") == name)
        return j;
  Missing(fmt::format("no job {}/{} in the {} results", ns, name, which));
}

double Rate(const json& job, const char* key, const std::string& what) {
  if (!job.contains(key) || !job[key].is_number() ||
      job[key].get<double>() <= 0)
    Missing(fmt::format("no {} ({})", what, key));
  return job[key].get<double>();
}

// The namespace and training job of `pod` in a results file.
std::pair<std::string, std::string> JobOfPod(const json& results,
                                             const std::string& pod,
                                             const char* which) {
  const json pods = results.value("pods", json::object());
  if (!pods.contains(pod) || !pods[pod].is_object())
    Missing(fmt::format("no pod {} in the {} results", pod, which));
  return {pods[pod].value("namespace", ""),
          pods[pod].value("training_job", "")};
}

}  // namespace

WhatIfResult CompareWhatIf(const json& diagnosed, const json* fixed,
                           const std::string& kind, const std::string& pod,
                           double tolerance) {
  WhatIfResult r;
  const auto [ns, name] = JobOfPod(diagnosed, pod, "diagnosed run's");
  r.job = ns + "/" + name;

  std::optional<double> predicted;
  for (const json& d : diagnosed.value("diagnoses", json::array())) {
    if (!d.is_object() || d.value("kind", "") != kind ||
        d.value("pod", "") != pod)
      continue;
    if (d.contains("expected_speedup") && d["expected_speedup"].is_number())
      predicted = d["expected_speedup"].get<double>();
  }
  if (!predicted)
    Missing(fmt::format("the results have no {} on {} with an expected_speedup",
                        kind, pod));
  r.predicted = *predicted;

  const json& slow = JobEntry(diagnosed, ns, name, "diagnosed run's");
  const double now =
      Rate(slow, "true_steps_per_second", "true steps/s of the last minute");
  if (fixed) {
    const json& after = JobEntry(*fixed, ns, name, "fixed run's");
    const double then =
        Rate(after, "true_steps_per_second", "true steps/s of the fixed run");
    r.measured = then / now;
    r.measured_as = fmt::format(
        "{:.3f} steps/s with the fix ({}) / {:.3f} steps/s without ({})", then,
        fixed->value("scenario", "?"), now, diagnosed.value("scenario", "?"));
  } else {
    const double before =
        Rate(slow, "true_steps_per_second_before_faults",
             "true steps/s before the first fault (does the scenario have a "
             "fault that starts after the warm-up?)");
    r.measured = before / now;
    r.measured_as = fmt::format(
        "{:.3f} steps/s before the fault / {:.3f} steps/s in the last minute",
        before, now);
  }
  r.error = (r.predicted - r.measured) / r.measured;
  r.passed = std::fabs(r.error) <= tolerance;
  return r;
}

ScalingResult CompareScaling(const json& forecast_run,
                             const std::vector<json>& runs,
                             const std::string& kind, const std::string& pod,
                             double tolerance) {
  ScalingResult r;
  const auto [ns, name] = JobOfPod(forecast_run, pod, "forecast run's");
  r.job = ns + "/" + name;
  std::optional<json> headroom;
  for (const json& d : forecast_run.value("diagnoses", json::array())) {
    if (!d.is_object() || d.value("kind", "") != kind ||
        d.value("pod", "") != pod)
      continue;
    const json evidence =
        d.value("last", json::object()).value("evidence", json::object());
    if (evidence.contains("headroom")) headroom = evidence["headroom"];
  }
  if (!headroom || !(*headroom).contains("max_steps_per_second"))
    Missing(fmt::format(
        "the forecast run has no {} on {} with a headroom.max_steps_per_second",
        kind, pod));
  r.forecast = (*headroom)["max_steps_per_second"].get<double>();
  r.forecast_workers = headroom->value("max_workers", 0.0);
  r.workers = headroom->value("workers", size_t{0});
  std::vector<const json*> all = {&forecast_run};
  for (const json& run : runs) all.push_back(&run);
  for (const json* run : all) {
    const double rate = Rate(JobEntry(*run, ns, name, "scaling runs'"),
                             "true_steps_per_second", "true steps/s");
    if (rate > r.plateau) {
      r.plateau = rate;
      r.plateau_run = run->value("scenario", "?");
    }
  }
  r.error = (r.forecast - r.plateau) / r.plateau;
  r.passed = std::fabs(r.error) <= tolerance;
  return r;
}

}  // namespace trainsim
