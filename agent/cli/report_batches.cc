#include "cli/report_batches.h"

#include <fmt/format.h>

#include <map>
#include <optional>
#include <set>
#include <utility>

#include "cli/report_prometheus.h"
#include "cli/server_text.h"
#include "trainscope/pod.h"

namespace trainscope::cli {
namespace {

// What one batch holds of one namespace.
struct NamespacePart {
  std::vector<std::string> jobs;
  std::vector<std::string> loose_pods;  // pods of no job
};

struct Planner {
  size_t max_series;
  std::string base;
  // Loose pods per namespace in the whole roster; empty when planning a
  // subset (no namespace is then whole).
  std::map<std::string, size_t> loose_in_namespace;
  std::vector<Batch> batches;
  std::map<std::string, NamespacePart> current;
  size_t current_pods = 0;
  size_t current_series = 0;

  void Add(const std::string& ns, const std::string& job,
           const std::vector<std::string>& loose, size_t pods, size_t series) {
    if (current_pods > 0 && current_series + series > max_series) Flush();
    NamespacePart& part = current[ns];
    if (!job.empty()) part.jobs.push_back(job);
    part.loose_pods.insert(part.loose_pods.end(), loose.begin(), loose.end());
    current_pods += pods;
    current_series += series;
  }

  std::string WithBase(const std::string& matchers) const {
    return base.empty() ? matchers : base + "," + matchers;
  }

  void Flush() {
    if (current_pods == 0) return;
    Batch batch;
    batch.pods = current_pods;
    batch.estimated_series = current_series;
    // Namespaces whose loose pods are all in this batch: one matcher.
    std::vector<std::string> whole_namespaces;
    for (const auto& [ns, part] : current) {
      const std::string in_ns = "namespace=" + PromQLString(ns);
      if (part.jobs.size() == 1) {
        batch.matcher_sets.push_back(WithBase(
            in_ns + ",training_job=" + PromQLString(part.jobs.front())));
      } else if (!part.jobs.empty()) {
        batch.matcher_sets.push_back(
            WithBase(in_ns + ",training_job=~" +
                     PromQLString(ExactAlternatives(part.jobs))));
      }
      if (part.loose_pods.empty()) continue;
      if (auto it = loose_in_namespace.find(ns);
          it != loose_in_namespace.end() &&
          part.loose_pods.size() == it->second) {
        whole_namespaces.push_back(ns);
        continue;
      }
      batch.matcher_sets.push_back(
          WithBase(in_ns + ",training_job=\"\",pod=~" +
                   PromQLString(ExactAlternatives(part.loose_pods))));
    }
    if (whole_namespaces.size() == 1) {
      batch.matcher_sets.push_back(
          WithBase("namespace=" + PromQLString(whole_namespaces.front()) +
                   ",training_job=\"\""));
    } else if (!whole_namespaces.empty()) {
      batch.matcher_sets.push_back(WithBase(
          "namespace=~" + PromQLString(ExactAlternatives(whole_namespaces)) +
          ",training_job=\"\""));
    }
    batches.push_back(std::move(batch));
    current.clear();
    current_pods = 0;
    current_series = 0;
  }
};

}  // namespace

std::string PodRosterQuery(const std::string& matchers, double range_seconds) {
  return fmt::format(
      "group by (namespace, pod, training_job, role, node) "
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
                           ServerText(series.dump(), 200));
    }
    const auto& metric = series["metric"];
    PodRef ref{LabelOf(metric, "namespace"), LabelOf(metric, "pod"),
               LabelOf(metric, "training_job"), LabelOf(metric, "role"),
               LabelOf(metric, "node")};
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

size_t EstimatedJobSeries(size_t pods, size_t workers, size_t ps) {
  const size_t pairs = ps > 0 ? workers * ps : 2 * workers;
  return pods * kSeriesPerPod + pairs * kSeriesPerPeerPair;
}

std::vector<Batch> PlanBatches(const std::vector<PodRef>& pods,
                               size_t max_series, const std::string& base,
                               bool subset) {
  struct JobSize {
    size_t pods = 0, workers = 0, ps = 0;
  };
  // Jobs and loose pods per namespace, in name order (stable batches).
  std::map<std::string, std::map<std::string, JobSize>> jobs;
  std::map<std::string, std::set<std::string>> loose;
  std::set<std::pair<std::string, std::string>> seen;
  for (const auto& p : pods) {
    if (!seen.insert({p.namespace_name, p.pod}).second) continue;
    if (p.training_job.empty()) {
      loose[p.namespace_name].insert(p.pod);
      continue;
    }
    JobSize& job = jobs[p.namespace_name][p.training_job];
    ++job.pods;
    const std::optional<Role> role = ParseRole(p.role);
    if (role == Role::kPs) ++job.ps;
    if (role == Role::kWorker || role == Role::kChief ||
        role == Role::kMaster) {
      ++job.workers;
    }
  }
  size_t total = 0;
  for (const auto& [ns, by_job] : jobs) {
    for (const auto& [job, size] : by_job) {
      total += EstimatedJobSeries(size.pods, size.workers, size.ps);
    }
  }
  for (const auto& [ns, names] : loose) total += names.size() * kSeriesPerPod;
  if (total <= max_series && !subset) {
    return {Batch{{base}, seen.size(), total}};
  }
  Planner planner{max_series, base, {}, {}, {}, 0, 0};
  for (const auto& [ns, names] : loose) {
    if (!subset) planner.loose_in_namespace[ns] = names.size();
  }
  std::set<std::string> namespaces;
  for (const auto& [ns, _] : jobs) namespaces.insert(ns);
  for (const auto& [ns, _] : loose) namespaces.insert(ns);
  for (const auto& ns : namespaces) {
    if (auto it = jobs.find(ns); it != jobs.end()) {
      for (const auto& [job, size] : it->second) {
        planner.Add(ns, job, {}, size.pods,
                    EstimatedJobSeries(size.pods, size.workers, size.ps));
      }
    }
    if (auto it = loose.find(ns); it != loose.end()) {
      for (const auto& pod : it->second) {
        planner.Add(ns, "", {pod}, 1, kSeriesPerPod);
      }
    }
  }
  planner.Flush();
  return std::move(planner.batches);
}

std::vector<Batch> PlanPodBatches(const std::vector<PodRef>& pods,
                                  size_t max_series, const std::string& base) {
  constexpr size_t kWeight = 2 * kSeriesPerPod;
  std::map<std::string, std::set<std::string>> by_namespace;
  for (const auto& p : pods) by_namespace[p.namespace_name].insert(p.pod);
  std::vector<Batch> out;
  std::map<std::string, std::vector<std::string>> current;
  size_t current_pods = 0;
  auto flush = [&] {
    if (current_pods == 0) return;
    Batch batch;
    batch.pods = current_pods;
    batch.estimated_series = current_pods * kWeight;
    batch.pods_without_jobs = true;
    for (const auto& [ns, names] : current) {
      const std::string matchers = "namespace=" + PromQLString(ns) + ",pod=~" +
                                   PromQLString(ExactAlternatives(names));
      batch.matcher_sets.push_back(base.empty() ? matchers
                                                : base + "," + matchers);
    }
    out.push_back(std::move(batch));
    current.clear();
    current_pods = 0;
  };
  for (const auto& [ns, names] : by_namespace) {
    for (const auto& name : names) {
      if (current_pods > 0 && (current_pods + 1) * kWeight > max_series) {
        flush();
      }
      current[ns].push_back(name);
      ++current_pods;
    }
  }
  flush();
  return out;
}

}  // namespace trainscope::cli
