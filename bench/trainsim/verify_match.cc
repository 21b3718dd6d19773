#include "verify_match.h"

#include <algorithm>
#include <cmath>

namespace trainsim {

using nlohmann::json;

VerifyTracker::VerifyTracker(const Scenario& scenario) : scenario_(scenario) {
  for (const Job& job : scenario.jobs)
    for (const auto& [role, n] : job.Replicas())
      for (int k = 0; k < n; ++k) pods_.push_back(job.PodName(role, k));
}

void VerifyTracker::Observe(const json& report, double now_s) {
  if (!report.is_object() || !report.contains("diagnoses") ||
      !report["diagnoses"].is_array())
    return;
  for (const json& d : report["diagnoses"]) {
    if (!d.is_object()) continue;
    std::string kind = d.value("kind", ""), pod = d.value("pod", ""),
                severity = d.value("severity", "");
    if (severity != "warning" && severity != "critical") continue;
    if (std::find(pods_.begin(), pods_.end(), pod) == pods_.end()) continue;
    seen_.emplace(std::make_pair(kind, pod), now_s);
  }
}

bool VerifyTracker::Listed(const std::vector<Expectation>& list,
                           const std::string& kind,
                           const std::string& pod) const {
  return std::find(list.begin(), list.end(), Expectation{kind, pod}) !=
         list.end();
}

// after_s counts from the latest fault on the pod that had started by then,
// else from the job's start.
double VerifyTracker::FaultStart(const std::string& pod, double seen_s) const {
  double start = 0;
  for (const Fault& f : scenario_.faults)
    if (f.pod == pod && f.start_s <= seen_s) start = std::max(start, f.start_s);
  return start;
}

size_t VerifyTracker::DetectedCount() const {
  size_t n = 0;
  for (const Expectation& e : scenario_.expect)
    n += seen_.count({e.kind, e.pod});
  return n;
}

bool VerifyTracker::Passed() const {
  const auto r = ResultJson();
  return r["missing"].empty() && r["unexpected"].empty();
}

nlohmann::ordered_json VerifyTracker::ResultJson() const {
  using ojson = nlohmann::ordered_json;
  ojson detected = ojson::array(), missing = ojson::array(),
        unexpected = ojson::array();
  for (const Expectation& e : scenario_.expect) {
    auto it = seen_.find({e.kind, e.pod});
    if (it == seen_.end()) {
      missing.push_back({{"kind", e.kind}, {"pod", e.pod}});
      continue;
    }
    double after = it->second - FaultStart(e.pod, it->second);
    detected.push_back({{"kind", e.kind},
                        {"pod", e.pod},
                        {"after_s", std::round(after * 10) / 10}});
  }
  for (const auto& [key, at] : seen_) {
    const auto& [kind, pod] = key;
    if (!Listed(scenario_.expect, kind, pod) &&
        !Listed(scenario_.allow, kind, pod))
      unexpected.push_back({{"kind", kind}, {"pod", pod}});
  }
  return ojson{{"scenario", scenario_.name},
               {"passed", missing.empty() && unexpected.empty()},
               {"detected", detected},
               {"missing", missing},
               {"unexpected", unexpected}};
}

}  // namespace trainsim
