#include "report/report_json.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <map>
#include <sstream>
#include <tuple>

#include "diagnosis/detectors.h"
#include "report/lost_time_text.h"
#include "report/stall_text.h"
#include "report_page/model.h"

namespace trainscope {
namespace {

// "namespace/pod" -> "pod".
std::string NameOfKey(const std::string& key) {
  const auto slash = key.find('/');
  return slash == std::string::npos ? key : key.substr(slash + 1);
}

// Rates rounded to 0.1 B/s: the page and a reader need no more.
double Rate(double bytes_per_second) {
  return std::round(bytes_per_second * 10) / 10;
}

}  // namespace

nlohmann::json PodsView(const PodList& pods, const Snapshot* latest) {
  nlohmann::json items = nlohmann::json::array();
  for (const auto& pod : pods) {
    const PodSample* sample = nullptr;
    if (latest) {
      auto it = latest->pod_samples.find(pod.uid);
      if (it != latest->pod_samples.end()) sample = &it->second;
    }
    nlohmann::json containers = nlohmann::json::array();
    for (const auto& c : pod.containers) {
      nlohmann::json entry = {{"name", c.name},
                              {"id", c.id},
                              {"runtime", c.runtime},
                              {"cgroup_path", nullptr}};
      if (sample) {
        for (const auto& cs : sample->containers) {
          if (cs.id == c.id) entry["cgroup_path"] = cs.cgroup_path;
        }
      }
      containers.push_back(std::move(entry));
    }
    items.push_back({
        {"namespace", pod.namespace_name},
        {"name", pod.name},
        {"uid", pod.uid},
        {"node", pod.node},
        {"phase", pod.phase},
        {"training_job", pod.training_job},
        {"role", RoleName(pod.role)},
        {"job_kind", JobKindName(pod.job_kind)},
        {"framework", FrameworkName(pod.framework)},
        {"replica_index", pod.replica_index >= 0
                              ? nlohmann::json(pod.replica_index)
                              : nlohmann::json(nullptr)},
        {"pod_ip", pod.pod_ip},
        {"pod_ips", pod.pod_ips},
        {"host_network", pod.host_network || (sample && sample->host_network)},
        {"cgroup_path", sample ? nlohmann::json(sample->cgroup_path)
                               : nlohmann::json(nullptr)},
        {"containers", std::move(containers)},
    });
  }
  return {{"pods", std::move(items)}};
}

nlohmann::json ReportView(const std::string& node, const PodList& pods,
                          const nlohmann::json& diagnoses,
                          std::chrono::system_clock::time_point now) {
  // (namespace, job) -> role lists, in a stable order.
  std::map<std::pair<std::string, std::string>,
           std::pair<std::vector<std::string>, std::vector<std::string>>>
      jobs;
  std::map<std::pair<std::string, std::string>, nlohmann::json> nodes;
  for (const auto& pod : pods) {
    if (pod.training_job.empty()) continue;
    auto& [ps, workers] = jobs[{pod.namespace_name, pod.training_job}];
    auto& job_nodes = nodes[{pod.namespace_name, pod.training_job}];
    if (!job_nodes.is_object()) job_nodes = nlohmann::json::object();
    if (!pod.node.empty()) job_nodes[pod.name] = pod.node;
    if (pod.role == Role::kPs) ps.push_back(pod.name);
    if (pod.role == Role::kWorker || pod.role == Role::kChief ||
        pod.role == Role::kMaster) {
      workers.push_back(pod.name);
    }
  }
  nlohmann::json job_list = nlohmann::json::array();
  for (auto& [key, roles] : jobs) {
    std::sort(roles.first.begin(), roles.first.end());
    std::sort(roles.second.begin(), roles.second.end());
    job_list.push_back({{"namespace", key.first},
                        {"training_job", key.second},
                        {"ps", roles.first},
                        {"workers", roles.second},
                        {"ps_traffic_share", nlohmann::json::object()},
                        {"pod_nodes", std::move(nodes[key])}});
  }
  return {
      {"generated_at", Rfc3339(now)},
      {"node", node},
      {"diagnoses", diagnoses.is_array() ? diagnoses : nlohmann::json::array()},
      {"jobs", std::move(job_list)}};
}

std::vector<JobPsShares> PsSharesOf(
    const std::vector<diagnosis::JobTraffic>& jobs) {
  std::vector<JobPsShares> out;
  for (const auto& job : jobs) {
    JobPsShares s{job.namespace_name, job.training_job};
    for (const auto& t : job.ps_traffic) {
      s.share[t.pod] = t.share;
      s.ps_bytes_per_second[t.pod] = t.bytes_per_second;
    }
    for (const auto& [worker, bytes] : job.worker_exchange) {
      s.worker_bytes_per_second[NameOfKey(worker)] = bytes;
    }
    for (const auto& [worker, peers] : job.worker_ps_links) {
      for (const auto& [ps, bytes] : peers) {
        s.links[{NameOfKey(worker), NameOfKey(ps)}] += bytes;
      }
    }
    s.measured_from = job.perspective;
    out.push_back(std::move(s));
  }
  return out;
}

namespace {

// The report's entry of a job, added (with empty lists) when missing.
nlohmann::json& JobEntry(nlohmann::json& report, const std::string& ns,
                         const std::string& job) {
  auto& list = report["jobs"];
  for (auto& j : list) {
    if (j.value("namespace", "") == ns && j.value("training_job", "") == job)
      return j;
  }
  list.push_back({{"namespace", ns},
                  {"training_job", job},
                  {"ps", nlohmann::json::array()},
                  {"workers", nlohmann::json::array()},
                  {"ps_traffic_share", nlohmann::json::object()}});
  return list.back();
}

}  // namespace

void SetJobSpeeds(nlohmann::json& report,
                  const std::vector<diagnosis::JobSpeed>& speeds) {
  for (const auto& job : speeds) {
    nlohmann::json& entry =
        JobEntry(report, job.namespace_name, job.training_job);
    nlohmann::json rates = nlohmann::json::object();
    for (const auto& [pod, r] : job.worker_steps_per_second)
      rates[pod] = diagnosis::Round4(r);
    entry["worker_steps_per_second"] = std::move(rates);
    entry["workers_without_step_rate"] = job.workers_without_rate;
    if (job.worker_steps_per_second.empty()) continue;
    entry["steps_per_second"] = diagnosis::Round4(job.steps_per_second);
    entry["steps_per_second_per_worker"] = diagnosis::Round4(
        job.steps_per_second /
        static_cast<double>(job.worker_steps_per_second.size()));
  }
}

void SetJobHeadroom(nlohmann::json& report,
                    const std::vector<diagnosis::JobHeadroom>& headroom) {
  for (const auto& h : headroom) {
    JobEntry(report, h.namespace_name, h.training_job)["headroom"] =
        diagnosis::HeadroomJson(h);
  }
}

void SetPsTrafficShares(nlohmann::json& report,
                        const std::vector<JobPsShares>& jobs) {
  for (const auto& job : jobs) {
    nlohmann::json* entry =
        &JobEntry(report, job.namespace_name, job.training_job);
    nlohmann::json share = nlohmann::json::object();
    for (const auto& [pod, ratio] : job.share) share[pod] = ratio;
    (*entry)["ps_traffic_share"] = std::move(share);
    // PS on other nodes are part of the job too.
    auto& ps = (*entry)["ps"];
    for (const auto& [pod, ratio] : job.share) {
      if (std::find(ps.begin(), ps.end(), pod) == ps.end()) ps.push_back(pod);
    }
    std::sort(ps.begin(), ps.end());
    nlohmann::json ps_rates = nlohmann::json::object();
    for (const auto& [pod, r] : job.ps_bytes_per_second)
      ps_rates[pod] = Rate(r);
    (*entry)["ps_bytes_per_second"] = std::move(ps_rates);
    nlohmann::json worker_rates = nlohmann::json::object();
    for (const auto& [pod, r] : job.worker_bytes_per_second) {
      worker_rates[pod] = Rate(r);
    }
    (*entry)["worker_ps_bytes_per_second"] = std::move(worker_rates);
    nlohmann::json links = nlohmann::json::array();
    for (const auto& [pair, r] : job.links) {
      links.push_back({{"worker", pair.first},
                       {"ps", pair.second},
                       {"bytes_per_second", Rate(r)}});
    }
    (*entry)["links"] = std::move(links);
    if (!job.measured_from.empty()) {
      (*entry)["measured_from"] = job.measured_from;
    }
    if (!entry->contains("pod_nodes")) {
      (*entry)["pod_nodes"] = nlohmann::json::object();
    }
  }
}

void AddPodNodes(nlohmann::json& report, const PodList& known) {
  std::map<std::pair<std::string, std::string>, std::string> node_of;
  for (const auto& pod : known) {
    if (!pod.node.empty()) node_of[{pod.namespace_name, pod.name}] = pod.node;
  }
  if (node_of.empty() || !report.contains("jobs")) return;
  for (auto& job : report["jobs"]) {
    if (!job.is_object()) continue;
    const std::string ns = job.value("namespace", "");
    auto& nodes = job["pod_nodes"];
    if (!nodes.is_object()) nodes = nlohmann::json::object();
    auto add = [&](const std::string& pod) {
      if (nodes.contains(pod)) return;
      if (auto it = node_of.find({ns, pod}); it != node_of.end()) {
        nodes[pod] = it->second;
      }
    };
    const nlohmann::json shares =
        job.value("ps_traffic_share", nlohmann::json::object());
    for (const auto& [pod, v] : shares.items()) add(pod);
    const nlohmann::json links = job.value("links", nlohmann::json::array());
    for (const auto& link : links) add(link.value("worker", ""));
  }
}

namespace {

// What a diagnosis is about: its pod; a node-level one names its node
// instead, a job-wide one (a stall no rank is blamed for) its job.
std::string Subject(const nlohmann::json& d) {
  const std::string ns = page::ClusterPrefix(d) + d.value("namespace", "");
  if (!d.value("pod", "").empty()) return ns + "/" + d.value("pod", "");
  const std::string job = d.value("training_job", "");
  const bool job_wide =
      !job.empty() && (d.value("node", "").empty() ||
                       d.value("kind", "") == diagnosis::kTrainingStalled);
  return job_wide ? "job/" + ns + "/" + job
                  : "node/" + page::ClusterPrefix(d) + d.value("node", "");
}

void WriteDiagnosis(const nlohmann::json& d, std::ostringstream& out) {
  char line[512];
  const std::string subject = Subject(d);
  std::snprintf(line, sizeof line, "%-9s %-31s %-29s %-21s %s\n",
                d.value("severity", "").c_str(), d.value("kind", "").c_str(),
                subject.c_str(), d.value("since", "").c_str(),
                d.value("summary", "").c_str());
  out << line;
  const nlohmann::json ev = d.value("evidence", nlohmann::json::object());
  // Which rank stopped the job, and what every rank does meanwhile.
  if (d.value("kind", "") == diagnosis::kTrainingStalled) {
    out << StallRanksText(ev, "          ");
  }
  if (ev.contains("cost_fraction") && ev.contains("expected_speedup")) {
    std::snprintf(line, sizeof line,
                  "          costs %.0f%% of the step; fixed, the job "
                  "would run %.2fx as fast (%s)\n",
                  ev.value("cost_fraction", 0.0) * 100,
                  ev.value("expected_speedup", 1.0),
                  ev.value("cost_model", "").c_str());
    out << line;
  }
  // The scalar evidence on one line; nested evidence (per-PS shares) is in
  // the jobs section below and in the JSON.
  std::string evidence;
  for (const auto& [key, value] : ev.items()) {
    if (value.is_structured()) continue;
    evidence += (evidence.empty() ? "" : ", ") + key + "=" +
                (value.is_string() ? value.get<std::string>() : value.dump());
  }
  if (!evidence.empty()) out << "          evidence: " << evidence << "\n";
  for (const auto& r : d.value("recommendations", nlohmann::json::array())) {
    out << "          -> " << r.get<std::string>() << "\n";
  }
}

void WriteJob(const nlohmann::json& job, std::ostringstream& out) {
  out << "  " << page::ClusterPrefix(job) << job.value("namespace", "") << "/"
      << job.value("training_job", "") << ": " << job["ps"].size() << " PS, "
      << job["workers"].size() << " workers\n";
  char line[256];
  if (job.contains("steps_per_second")) {
    std::snprintf(line, sizeof line,
                  "    %.3g steps/s in all, %.3g per worker (%zu workers "
                  "with a step rate)\n",
                  job.value("steps_per_second", 0.0),
                  job.value("steps_per_second_per_worker", 0.0),
                  job["worker_steps_per_second"].size());
    out << line;
    for (const auto& [pod, rate] : job["worker_steps_per_second"].items()) {
      std::snprintf(line, sizeof line, "    %-30s %.3g steps/s\n", pod.c_str(),
                    rate.get<double>());
      out << line;
    }
  }
  for (const auto& pod :
       job.value("workers_without_step_rate", nlohmann::json::array())) {
    out << "    " << pod.get<std::string>()
        << ": no clear step period in its traffic\n";
  }
  for (const auto& [pod, share] : job["ps_traffic_share"].items()) {
    std::snprintf(line, sizeof line, "    %-30s PS traffic share %5.1f%%\n",
                  pod.c_str(), share.get<double>() * 100);
    out << line;
  }
}

}  // namespace

std::string ReportText(const nlohmann::json& report) {
  std::ostringstream out;
  out << "Trainscope report for node " << report.value("node", "?") << " at "
      << report.value("generated_at", "?") << "\n\n";
  const auto& diagnoses = report["diagnoses"];
  if (diagnoses.empty()) {
    out << "No active diagnoses.\n";
  } else {
    out << "SEVERITY  KIND                            POD                    "
           "       SINCE                 SUMMARY\n";
    for (const nlohmann::json* d : StallsFirst(diagnoses)) {
      WriteDiagnosis(*d, out);
    }
  }
  for (const auto& m : report.value("missing_nodes", nlohmann::json::array())) {
    out << "\nWARNING: node " << page::ClusterPrefix(m) << m.value("node", "?")
        << " sent no series since " << m.value("last_seen", "?")
        << ": its agent is down or not scraped; its pods are judged on "
           "partial data.\n";
  }
  out << LostTimeText(report);
  out << "\nTraining jobs:\n";
  if (report["jobs"].empty()) out << "  (no training pods recognised)\n";
  for (const auto& job : report["jobs"]) WriteJob(job, out);
  return out.str();
}

}  // namespace trainscope
