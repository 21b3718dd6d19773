#include "verify_match.h"

#include <algorithm>
#include <cmath>

namespace trainsim {

using nlohmann::json;
using ojson = nlohmann::ordered_json;

namespace {

bool PodOfJob(const Job& job, const std::string& pod) {
  for (const auto& [role, n] : job.Replicas())
    for (int k = 0; k < n; ++k)
      if (job.PodName(role, k) == pod) return true;
  return false;
}

}  // namespace

bool IsFinding(const std::string& severity) {
  return severity == "warning" || severity == "critical";
}

ojson EntryJson(const std::string& kind, const std::string& pod,
                const std::string& node, const std::string& job) {
  ojson e{{"kind", kind}, {"pod", pod}};
  if (pod.empty() && !job.empty())
    e["job"] = job;
  else if (pod.empty() && !node.empty())
    e["node"] = node;
  return e;
}

VerifyTracker::Key VerifyTracker::KeyOf(const Expectation& e) {
  if (!e.job.empty()) return {e.kind, "", "", e.job};
  return {e.kind, e.pod, e.pod.empty() ? e.node : "", ""};
}

bool VerifyTracker::Matches(const Expectation& e, const Key& key) {
  return KeyOf(e) == key;
}

VerifyTracker::VerifyTracker(const Scenario& scenario) : scenario_(scenario) {
  for (const Job& job : scenario.jobs)
    for (const auto& [role, n] : job.Replicas())
      for (int k = 0; k < n; ++k) pods_.insert(job.PodName(role, k));
  for (const NodeSpec& n : scenario.nodes) nodes_.insert(n.name);
  for (const Job& job : scenario.jobs)
    jobs_.insert(job.namespace_name + "/" + job.name);
}

void VerifyTracker::Observe(const json& report, double now_s) {
  if (!report.is_object() || !report.contains("diagnoses") ||
      !report["diagnoses"].is_array())
    return;
  for (const json& d : report["diagnoses"]) {
    if (!d.is_object()) continue;
    auto str = [&](const char* key) {
      auto it = d.find(key);
      return it != d.end() && it->is_string() ? it->get<std::string>() : "";
    };
    const std::string kind = str("kind"), pod = str("pod"), node = str("node"),
                      severity = str("severity"),
                      job = str("namespace") + "/" + str("training_job");
    if (severity != "info" && severity != "warning" && severity != "critical")
      continue;
    Key key;
    if (pods_.count(pod))
      key = {kind, pod, "", ""};
    else if (pod.empty() && nodes_.count(node))
      // A node-level one, even when it names the job filling the node's
      // link (network_saturated keeps its busiest pod's job).
      key = {kind, "", node, ""};
    else if (pod.empty() && !str("training_job").empty() && jobs_.count(job))
      key = {kind, "", "", job};  // a job-level diagnosis (third edition)
    else
      continue;  // not about this scenario's pods or nodes
    seen_[key].emplace(severity, now_s);
  }
}

std::optional<double> VerifyTracker::FirstSeen(const Expectation& e) const {
  auto it = seen_.find(KeyOf(e));
  if (it == seen_.end()) return std::nullopt;
  std::optional<double> first;
  for (const auto& [severity, at] : it->second)
    if (e.severity.empty() ? IsFinding(severity) : e.severity == severity)
      first = first ? std::min(*first, at) : at;
  return first;
}

bool VerifyTracker::Covered(const std::vector<Expectation>& list,
                            const Key& key) const {
  return std::any_of(list.begin(), list.end(),
                     [&key](const Expectation& e) { return Matches(e, key); });
}

double VerifyTracker::AfterS(const Expectation& e, double seen_s) const {
  double start = 0;
  const Job* job = e.job.empty() ? nullptr : FindJob(scenario_, e.job);
  for (const Fault& f : scenario_.faults) {
    // A job-level diagnosis counts from a fault on any pod of the job.
    const bool same = job             ? PodOfJob(*job, f.pod)
                      : e.pod.empty() ? (f.pod.empty() && f.node == e.node)
                                      : f.pod == e.pod;
    if (same && f.start_s <= seen_s) start = std::max(start, f.start_s);
  }
  return std::round((seen_s - start) * 10) / 10;
}

size_t VerifyTracker::DetectedCount() const {
  size_t n = 0;
  for (const Expectation& e : scenario_.expect) n += FirstSeen(e).has_value();
  return n;
}

bool VerifyTracker::OnlyInfoExpected(const Key& key) const {
  bool info = false;
  for (const Expectation& e : scenario_.expect) {
    if (!Matches(e, key)) continue;
    if (e.severity != "info") return false;
    info = true;
  }
  return info;
}

ojson VerifyTracker::Unexpected() const {
  ojson unexpected = ojson::array();
  for (const auto& [key, severities] : seen_) {
    // The worst finding severity seen for the key, "" when only info.
    std::string worst;
    for (const auto& [severity, at] : severities)
      if (IsFinding(severity) && worst != "critical") worst = severity;
    if (worst.empty()) continue;  // info is never a finding
    const auto& [kind, pod, node, job] = key;
    // The scenario says the condition is harmless: reporting it as a
    // finding is the error, whatever allow says.
    if (OnlyInfoExpected(key)) {
      ojson entry = EntryJson(kind, pod, node, job);
      entry["severity"] = worst;
      entry["expected_severity"] = "info";
      unexpected.push_back(entry);
      continue;
    }
    if (Covered(scenario_.expect, key) || Covered(scenario_.allow, key))
      continue;
    unexpected.push_back(EntryJson(kind, pod, node, job));
  }
  return unexpected;
}

ojson VerifyTracker::ViewJson(const std::vector<bool>* required) const {
  ojson detected = ojson::array(), missing = ojson::array();
  for (size_t i = 0; i < scenario_.expect.size(); ++i) {
    const Expectation& e = scenario_.expect[i];
    auto at = FirstSeen(e);
    ojson entry = EntryJson(e.kind, e.pod, e.node, e.job);
    if (at) entry["after_s"] = AfterS(e, *at);
    if (required && i < required->size())
      entry["required"] = static_cast<bool>((*required)[i]);
    (at ? detected : missing).push_back(std::move(entry));
  }
  return ojson{{"detected", detected},
               {"missing", missing},
               {"unexpected", Unexpected()}};
}

bool VerifyTracker::Passed() const {
  const auto r = ViewJson();
  return r["missing"].empty() && r["unexpected"].empty();
}

ojson VerifyTracker::ResultJson() const {
  ojson view = ViewJson();
  return ojson{
      {"scenario", scenario_.name},
      {"passed", view["missing"].empty() && view["unexpected"].empty()},
      {"detected", view["detected"]},
      {"missing", view["missing"]},
      {"unexpected", view["unexpected"]}};
}

}  // namespace trainsim
