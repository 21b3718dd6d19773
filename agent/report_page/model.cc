#include "report_page/model.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <string_view>

namespace trainscope::page {
namespace {

using nlohmann::json;

std::string Str(const json& j, const char* key) {
  if (!j.is_object()) return "";
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "";
}

std::optional<double> Num(const json& j) {
  if (!j.is_number()) return std::nullopt;
  return j.get<double>();
}

const json& Field(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  auto it = j.find(key);
  return it != j.end() ? *it : kNull;
}

// "ps-2" before "ps-10": digit runs compare as numbers.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = std::isdigit(static_cast<unsigned char>(a[i]));
    const bool db = std::isdigit(static_cast<unsigned char>(b[j]));
    if (da && db) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei])))
        ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej])))
        ++ej;
      // Without leading zeros, the longer run is the larger number.
      std::string_view na(a.data() + i, ei - i), nb(b.data() + j, ej - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei;
      j = ej;
      continue;
    }
    if (a[i] != b[j]) return a[i] < b[j];
    ++i;
    ++j;
  }
  if ((a.size() - i) != (b.size() - j)) return a.size() - i < b.size() - j;
  return a < b;
}

using NameSet = std::set<std::string, decltype(&NaturalLess)>;

int SeverityRank(const std::string& s) {
  return s == "critical" ? 0 : s == "warning" ? 1 : 2;
}

RankView RankOf(const json& r) {
  RankView v;
  v.pod = Str(r, "pod");
  v.node = Str(r, "node");
  v.role = Str(r, "role");
  v.state = Str(r, "state");
  v.processes = ProcessCounts(Field(r, "processes"));
  v.cpu_cores = Num(Field(r, "cpu_cores"));
  v.quiet_seconds = Num(Field(r, "quiet_seconds"));
  v.transmit_bytes_per_second = Num(Field(r, "transmit_bytes_per_second"));
  v.receive_bytes_per_second = Num(Field(r, "receive_bytes_per_second"));
  const json& suspect = Field(r, "suspect");
  v.suspect = suspect.is_boolean() && suspect.get<bool>();
  v.unanswered_peer = Str(r, "unanswered_peer");
  return v;
}

DiagnosisView DiagnosisOf(const json& d) {
  DiagnosisView v{Str(d, "kind"),
                  Str(d, "severity"),
                  ClusterPrefix(d) + Str(d, "namespace"),
                  Str(d, "training_job"),
                  Str(d, "pod"),
                  Str(d, "node"),
                  Str(d, "since"),
                  Str(d, "summary"),
                  json::object(),
                  {},
                  {}};
  if (const json& e = Field(d, "evidence"); e.is_object()) v.evidence = e;
  for (const auto& r : Field(d, "recommendations")) {
    if (r.is_string()) v.recommendations.push_back(r.get<std::string>());
  }
  if (const json& ranks = Field(v.evidence, "ranks");
      v.Stalled() && ranks.is_array()) {
    for (const auto& r : ranks) {
      if (r.is_object()) v.ranks.push_back(RankOf(r));
    }
  }
  return v;
}

// A stopped job loses all its time: its stall leads, whatever the severity
// of the others (the agent's report order, SortByExpectedGain).
bool ShownBefore(const DiagnosisView& a, const DiagnosisView& b) {
  if (a.Stalled() != b.Stalled()) return a.Stalled();
  return SeverityRank(a.severity) < SeverityRank(b.severity);
}

// Pod names of a job from every field that names them.
void CollectNames(const json& job, NameSet& ps, NameSet& workers) {
  for (const auto& p : Field(job, "ps")) {
    if (p.is_string()) ps.insert(p.get<std::string>());
  }
  for (const auto& w : Field(job, "workers")) {
    if (w.is_string()) workers.insert(w.get<std::string>());
  }
  for (const char* key : {"ps_traffic_share", "ps_bytes_per_second"}) {
    if (const json& m = Field(job, key); m.is_object()) {
      for (const auto& [pod, v] : m.items()) ps.insert(pod);
    }
  }
  if (const json& m = Field(job, "worker_ps_bytes_per_second"); m.is_object()) {
    for (const auto& [pod, v] : m.items()) workers.insert(pod);
  }
  for (const auto& link : Field(job, "links")) {
    const std::string w = Str(link, "worker"), p = Str(link, "ps");
    if (!w.empty() && !p.empty()) {
      workers.insert(w);
      ps.insert(p);
    }
  }
  // A pod listed as PS is not also drawn as a worker.
  for (const auto& p : ps) workers.erase(p);
}

// "ctr-ps-0's transmit link", "ctr-ps-0's CPU", "node-a's uplink (receive)".
std::string ResourceWords(const json& r) {
  const std::string kind = Str(r, "resource");
  if (kind == "ps_cpu") return Str(r, "pod") + "'s CPU";
  if (kind == "ps_link")
    return Str(r, "pod") + "'s " + Str(r, "direction") + " link";
  return Str(r, "node") + "'s uplink (" + Str(r, "direction") + ")";
}

std::optional<JobView::Headroom> HeadroomOf(const json& h) {
  const json& top = Field(h, "bottleneck");
  auto workers = Num(Field(h, "workers"));
  auto max_workers = Num(Field(h, "max_workers"));
  auto use = Num(Field(top, "utilization_ratio"));
  if (!workers || !max_workers || !use) return std::nullopt;
  return JobView::Headroom{ResourceWords(top), *use, *workers, *max_workers};
}

JobView JobOf(const json& job) {
  JobView v;
  v.namespace_name = ClusterPrefix(job) + Str(job, "namespace");
  v.training_job = Str(job, "training_job");
  v.measured_from = Str(job, "measured_from");
  v.headroom = HeadroomOf(Field(job, "headroom"));
  NameSet ps(&NaturalLess), workers(&NaturalLess);
  CollectNames(job, ps, workers);
  const json& nodes = Field(job, "pod_nodes");
  auto make = [&](const std::string& name) {
    PodView p;
    p.name = name;
    if (const json& n = Field(nodes, name.c_str()); n.is_string()) {
      p.node = n.get<std::string>();
    }
    return p;
  };
  std::map<std::string, size_t> ps_index, worker_index;
  for (const auto& name : ps) {
    ps_index[name] = v.ps.size();
    PodView p = make(name);
    p.share = Num(Field(Field(job, "ps_traffic_share"), name.c_str()));
    p.bytes_per_second =
        Num(Field(Field(job, "ps_bytes_per_second"), name.c_str()));
    if (p.bytes_per_second) v.ps_bytes_per_second += *p.bytes_per_second;
    v.ps.push_back(std::move(p));
  }
  for (const auto& name : workers) {
    worker_index[name] = v.workers.size();
    PodView p = make(name);
    p.bytes_per_second =
        Num(Field(Field(job, "worker_ps_bytes_per_second"), name.c_str()));
    v.workers.push_back(std::move(p));
  }
  for (const auto& link : Field(job, "links")) {
    auto w = worker_index.find(Str(link, "worker"));
    auto p = ps_index.find(Str(link, "ps"));
    auto rate = Num(Field(link, "bytes_per_second"));
    if (w == worker_index.end() || p == ps_index.end() || !rate) continue;
    v.links.push_back({w->second, p->second, std::max(0.0, *rate)});
  }
  return v;
}

// A diagnosis that names a job but no pod (a whole job stalled with no
// rank to blame) belongs to that job's section.
bool MarkJob(ReportModel& m, size_t i) {
  const DiagnosisView& d = m.diagnoses[i];
  if (d.training_job.empty()) return false;
  for (auto& job : m.jobs) {
    if (job.namespace_name != d.namespace_name ||
        job.training_job != d.training_job)
      continue;
    job.diagnoses.push_back(i);
    return true;
  }
  return false;
}

void MarkPods(ReportModel& m) {
  for (size_t i = 0; i < m.diagnoses.size(); ++i) {
    const DiagnosisView& d = m.diagnoses[i];
    if (d.pod.empty()) {
      if (!d.node.empty())
        m.node_marks.push_back({d.node, {d.kind, d.severity}});
      MarkJob(m, i);
      continue;
    }
    for (auto& job : m.jobs) {
      if (job.namespace_name != d.namespace_name) continue;
      bool in_job = false;
      for (auto* list : {&job.ps, &job.workers}) {
        for (auto& pod : *list) {
          if (pod.name != d.pod) continue;
          pod.marks.push_back({d.kind, d.severity});
          if (d.kind == diagnosis::kHotParameterServer) pod.hot = true;
          if (d.kind == diagnosis::kStragglerWorker ||
              d.kind == diagnosis::kAllreduceStraggler) {
            pod.straggler = true;
          }
          in_job = true;
        }
      }
      if (in_job) job.diagnoses.push_back(i);
    }
  }
}

// Stalled jobs are drawn first, in the order of their stalls.
void MarkStalledJobs(ReportModel& m) {
  for (auto& job : m.jobs) {
    for (size_t i : job.diagnoses) job.stalled |= m.diagnoses[i].Stalled();
  }
  std::stable_sort(m.jobs.begin(), m.jobs.end(),
                   [](const JobView& a, const JobView& b) {
                     if (a.stalled != b.stalled) return a.stalled;
                     if (!a.stalled) return false;
                     return a.diagnoses.front() < b.diagnoses.front();
                   });
}

}  // namespace

std::string ProcessCounts(const json& p) {
  static constexpr std::pair<const char*, char> kStates[] = {
      {"running", 'R'},
      {"sleeping", 'S'},
      {"disk_sleep", 'D'},
      {"stopped", 'T'},
      {"zombie", 'Z'}};
  std::string out;
  for (const auto& [key, letter] : kStates) {
    const json& n = Field(p, key);
    if (!n.is_number_integer() || n.get<long long>() <= 0) continue;
    if (!out.empty()) out += ' ';
    out += std::to_string(n.get<long long>()) + letter;
  }
  return out;
}

std::string ClusterPrefix(const json& item) {
  const auto cluster = item.find("cluster");
  if (cluster == item.end() || !cluster->is_string()) return "";
  return cluster->get<std::string>() + ":";
}

ReportModel ModelOf(const json& report) {
  ReportModel m;
  m.node = Str(report, "node");
  m.generated_at = Str(report, "generated_at");
  m.source = Str(Field(report, "source"), "prometheus");
  for (const auto& d : Field(report, "diagnoses")) {
    if (d.is_object()) m.diagnoses.push_back(DiagnosisOf(d));
  }
  std::stable_sort(m.diagnoses.begin(), m.diagnoses.end(), ShownBefore);
  for (const auto& job : Field(report, "jobs")) {
    if (job.is_object()) m.jobs.push_back(JobOf(job));
  }
  MarkPods(m);
  MarkStalledJobs(m);
  return m;
}

std::string SeverityClass(const std::string& severity) {
  if (severity == "critical" || severity == "warning") return severity;
  return "info";
}

std::string KindTag(const std::string& kind) {
  static const std::map<std::string, std::string> tags = {
      {std::string(diagnosis::kHotParameterServer), "HOT"},
      {std::string(diagnosis::kPsCpuSaturated), "CPU"},
      {std::string(diagnosis::kStragglerWorker), "SLOW"},
      {std::string(diagnosis::kCpuThrottled), "THR"},
      {std::string(diagnosis::kNetworkSaturated), "NET"},
      {std::string(diagnosis::kMemoryPressure), "MEM"},
      {std::string(diagnosis::kInputIoBound), "IO"},
      {std::string(diagnosis::kGpuUnderutilized), "GPU"},
      {std::string(diagnosis::kAllreduceStraggler), "SLOW"},
      {std::string(diagnosis::kAllreduceSlowLink), "LINK"},
      {std::string(diagnosis::kPodRestarting), "RST"},
      {std::string(diagnosis::kGpuError), "XID"},
      {std::string(diagnosis::kTrainingStalled), "STOP"},
  };
  auto it = tags.find(kind);
  return it != tags.end() ? it->second : "!";
}

}  // namespace trainscope::page
