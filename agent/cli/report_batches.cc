#include "cli/report_batches.h"

#include <fmt/format.h>

#include <map>
#include <set>
#include <utility>

namespace trainscope::cli {
namespace {

// A PromQL string literal (JSON escaping is valid PromQL quoting).
std::string Quoted(const std::string& value) {
  return nlohmann::json(value).dump();
}

std::string Label(const nlohmann::json& metric, const char* name) {
  auto it = metric.find(name);
  return it != metric.end() && it->is_string() ? it->get<std::string>() : "";
}

// What one batch holds of one namespace.
struct NamespacePart {
  std::vector<std::string> jobs;
  std::vector<std::string> loose_pods;  // pods of no job
};

struct Planner {
  size_t max_pods;
  std::string base;
  std::map<std::string, size_t> loose_in_namespace;  // for the whole cluster
  std::vector<Batch> batches;
  std::map<std::string, NamespacePart> current;
  size_t current_pods = 0;

  void Add(const std::string& ns, const std::string& job,
           const std::vector<std::string>& loose, size_t pods) {
    if (current_pods > 0 && current_pods + pods > max_pods) Flush();
    NamespacePart& part = current[ns];
    if (!job.empty()) part.jobs.push_back(job);
    part.loose_pods.insert(part.loose_pods.end(), loose.begin(), loose.end());
    current_pods += pods;
  }

  std::string WithBase(const std::string& matchers) const {
    return base.empty() ? matchers : base + "," + matchers;
  }

  void Flush() {
    if (current_pods == 0) return;
    Batch batch;
    batch.pods = current_pods;
    // Namespaces whose loose pods are all in this batch: one matcher.
    std::vector<std::string> whole_namespaces;
    for (const auto& [ns, part] : current) {
      const std::string in_ns = "namespace=" + Quoted(ns);
      if (part.jobs.size() == 1) {
        batch.matcher_sets.push_back(
            WithBase(in_ns + ",training_job=" + Quoted(part.jobs.front())));
      } else if (!part.jobs.empty()) {
        batch.matcher_sets.push_back(WithBase(
            in_ns + ",training_job=~" + Quoted(ExactAlternatives(part.jobs))));
      }
      if (part.loose_pods.empty()) continue;
      if (part.loose_pods.size() == loose_in_namespace.at(ns)) {
        whole_namespaces.push_back(ns);
        continue;
      }
      batch.matcher_sets.push_back(
          WithBase(in_ns + ",training_job=\"\",pod=~" +
                   Quoted(ExactAlternatives(part.loose_pods))));
    }
    if (whole_namespaces.size() == 1) {
      batch.matcher_sets.push_back(
          WithBase("namespace=" + Quoted(whole_namespaces.front()) +
                   ",training_job=\"\""));
    } else if (!whole_namespaces.empty()) {
      batch.matcher_sets.push_back(
          WithBase("namespace=~" + Quoted(ExactAlternatives(whole_namespaces)) +
                   ",training_job=\"\""));
    }
    batches.push_back(std::move(batch));
    current.clear();
    current_pods = 0;
  }
};

}  // namespace

std::string PodRosterQuery(const std::string& matchers, double range_seconds) {
  return fmt::format(
      "group by (namespace, pod, training_job) "
      "(max_over_time(trainscope_pod_info{{{}}}[{}s]))",
      matchers, static_cast<long long>(range_seconds));
}

Status PodRefsFromVector(const nlohmann::json& result,
                         std::vector<PodRef>* pods) {
  if (!result.is_array()) {
    return Status::Error("the pod roster is not a vector");
  }
  for (const auto& series : result) {
    if (!series.is_object() || !series.contains("metric") ||
        !series["metric"].is_object()) {
      return Status::Error("the pod roster has a series without labels: " +
                           series.dump().substr(0, 200));
    }
    const auto& metric = series["metric"];
    PodRef ref{Label(metric, "namespace"), Label(metric, "pod"),
               Label(metric, "training_job")};
    if (ref.pod.empty()) continue;  // not a pod series: nothing to cut
    pods->push_back(std::move(ref));
  }
  return Status::Ok();
}

std::string ExactAlternatives(const std::vector<std::string>& names) {
  static const std::string kSpecial = R"(\.+*?()|[]{}^$)";
  std::string out;
  for (const auto& name : names) {
    if (!out.empty()) out += '|';
    for (char c : name) {
      if (kSpecial.find(c) != std::string::npos) out += '\\';
      out += c;
    }
  }
  return out;
}

std::vector<Batch> PlanBatches(const std::vector<PodRef>& pods, size_t max_pods,
                               const std::string& base) {
  // Jobs and loose pods per namespace, in name order (stable batches).
  std::map<std::string, std::map<std::string, size_t>> jobs;
  std::map<std::string, std::set<std::string>> loose;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& p : pods) {
    if (!seen.insert({p.namespace_name, p.pod}).second) continue;
    if (p.training_job.empty()) {
      loose[p.namespace_name].insert(p.pod);
    } else {
      ++jobs[p.namespace_name][p.training_job];
    }
  }
  if (seen.size() <= max_pods) {
    return {Batch{{base}, seen.size()}};
  }
  Planner planner{max_pods, base, {}, {}, {}, 0};
  for (const auto& [ns, names] : loose) {
    planner.loose_in_namespace[ns] = names.size();
  }
  std::set<std::string> namespaces;
  for (const auto& [ns, _] : jobs) namespaces.insert(ns);
  for (const auto& [ns, _] : loose) namespaces.insert(ns);
  for (const auto& ns : namespaces) {
    if (auto it = jobs.find(ns); it != jobs.end()) {
      for (const auto& [job, count] : it->second) {
        planner.Add(ns, job, {}, count);
      }
    }
    if (auto it = loose.find(ns); it != loose.end()) {
      for (const auto& pod : it->second) planner.Add(ns, "", {pod}, 1);
    }
  }
  planner.Flush();
  return std::move(planner.batches);
}

}  // namespace trainscope::cli
