#include "run_results.h"

#include <cmath>
#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace trainsim {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

// A cost figure from the diagnosis's evidence (or, failing that, from the
// diagnosis itself).
std::optional<double> Figure(const json& d, const char* name) {
  for (const json* j : {d.contains("evidence") ? &d["evidence"] : nullptr, &d})
    if (j && j->is_object() && j->contains(name) && (*j)[name].is_number()) {
      const double v = (*j)[name].get<double>();
      if (std::isfinite(v)) return v;
    }
  return std::nullopt;
}

ojson MedianSince(const std::vector<std::pair<double, double>>& series,
                  double from_s) {
  std::vector<double> v;
  for (const auto& [t, x] : series)
    if (t >= from_s) v.push_back(x);
  // A diagnosis gone before the last minute: its whole history.
  if (v.empty())
    for (const auto& [t, x] : series) v.push_back(x);
  auto m = Median(v);
  return m ? ojson(std::round(*m * 10000) / 10000) : ojson(nullptr);
}

ojson Round4(const std::optional<double>& v) {
  return v ? ojson(std::round(*v * 10000) / 10000) : ojson(nullptr);
}

}  // namespace

void DiagnosisLog::Observe(const json& report, double now_s) {
  if (!report.is_object() || !report.contains("diagnoses") ||
      !report["diagnoses"].is_array())
    return;
  for (const json& d : report["diagnoses"]) {
    if (!d.is_object()) continue;
    auto str = [&](const char* k) {
      return d.contains(k) && d[k].is_string() ? d[k].get<std::string>()
                                               : std::string();
    };
    Entry& e = entries_[{str("kind"), str("pod"),
                         str("pod").empty() ? str("node") : ""}];
    e.last = d;
    e.last_seen_s = now_s;
    // One figure per poll: a later view of the same poll replaces it.
    auto add = [&](std::vector<std::pair<double, double>>& s, const char* n) {
      auto v = Figure(d, n);
      if (!v) return;
      if (!s.empty() && s.back().first == now_s) s.pop_back();
      s.emplace_back(now_s, *v);
    };
    add(e.speedup, "expected_speedup");
    add(e.cost, "cost_fraction");
  }
}

ojson DiagnosisLog::Json(double from_s) const {
  ojson out = ojson::array();
  for (const auto& [key, e] : entries_) {
    const auto& [kind, pod, node] = key;
    ojson j{{"kind", kind}, {"pod", pod}};
    if (pod.empty()) j["node"] = node;
    j["severity"] =
        e.last.contains("severity") && e.last["severity"].is_string()
            ? e.last["severity"].get<std::string>()
            : "";
    j["last_seen_s"] = std::round(e.last_seen_s * 10) / 10;
    j["expected_speedup"] = MedianSince(e.speedup, from_s);
    j["cost_fraction"] = MedianSince(e.cost, from_s);
    j["last"] = e.last;
    out.push_back(j);
  }
  return out;
}

ojson RunResultsJson(const Scenario& scenario, const StepRateTracker& rates,
                     const DiagnosisLog& diagnoses, const ojson& verdict) {
  const auto [from, to] = rates.LastSpan();
  ojson pods = ojson::object();
  for (const Job& job : scenario.jobs)
    for (const auto& [role, n] : job.Replicas())
      for (int k = 0; k < n; ++k)
        pods[job.PodName(role, k)] = {{"namespace", job.namespace_name},
                                      {"training_job", job.name},
                                      {"role", std::string(PodRoleName(role))}};
  ojson workers = ojson::array();
  for (const auto& w : rates.Workers())
    workers.push_back(
        {{"pod", w.pod},
         {"namespace", w.namespace_name},
         {"training_job", w.job},
         {"checked", w.checked},
         {"true_steps_per_second", Round4(w.true_rate)},
         {"agent_steps_per_second", Round4(w.agent_rate)},
         {"agent_coverage", std::round(w.agent_coverage * 100) / 100},
         {"withdrawn", w.withdrawn},
         {"error_pct",
          w.error ? ojson(std::round(*w.error * 1000) / 10) : ojson(nullptr)}});
  ojson jobs = ojson::array();
  for (const auto& j : rates.Jobs())
    jobs.push_back(
        {{"namespace", j.namespace_name},
         {"training_job", j.job},
         {"checked", j.check.checked},
         {"true_steps_per_second", Round4(j.last_minute)},
         {"true_steps_per_second_before_faults", Round4(j.before_faults)},
         {"agent_steps_per_second", Round4(j.agent_last_minute)}});
  auto r1 = [](double t) { return std::round(t * 10) / 10; };
  ojson spans{{"last_minute_s", {r1(from), r1(to)}}};
  if (auto b = rates.BeforeFaultsSpan())
    spans["before_faults_s"] = {r1(b->first), r1(b->second)};
  else
    spans["before_faults_s"] = nullptr;
  return ojson{{"scenario", scenario.name},
               {"passed", verdict.value("passed", false)},
               {"spans", spans},
               {"pods", pods},
               {"workers", workers},
               {"jobs", jobs},
               {"diagnoses", diagnoses.Json(from)},
               {"verify", verdict}};
}

void WriteJsonFile(const std::string& path, const ojson& doc) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << doc.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
}

}  // namespace trainsim
