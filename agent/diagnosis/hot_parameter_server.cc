// hot_parameter_server: one PS carries a disproportionate share of its job's
// PS traffic (or CPU). The field story's root cause: round-robin placement
// of whole variables puts one big embedding on one PS.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "diagnosis/detectors.h"
#include "diagnosis/framework_advice.h"
#include "diagnosis/impact.h"

namespace trainscope::diagnosis {

double HotPsRatioThreshold(size_t n, const HotPsSettings& s) {
  return std::clamp(s.ratio_factor / static_cast<double>(n), s.min_share,
                    s.max_share);
}

double HotPsHoldShare(size_t n, const HotPsSettings& s) {
  if (n < s.robust_from) return HotPsRatioThreshold(n, s) - s.exit_margin;
  return 0.75 * s.ratio_factor / static_cast<double>(n);
}

namespace {

struct Verdict {
  Finding::Level level = Finding::Level::kHold;
  bool found = false;
  std::string rule;
};

// Enter beats hold; the first rule to reach the higher level names it.
void Raise(Verdict& v, Finding::Level level, const std::string& rule) {
  if (v.found &&
      (v.level == Finding::Level::kEnter || level == Finding::Level::kHold)) {
    return;
  }
  v = {level, true, rule};
}

// How busy the hot PS is: its CPU against its limit and its link against
// its capacity, whichever is fuller. Not against the node's CPUs: a PS
// that serves on a few threads is saturated long before the node is.
std::optional<double> PsBusyRatio(const PodStats& ps) {
  std::optional<double> busy;
  const auto& cores = ps.cpu_limit_cores;
  if (ps.cpu_cores && cores && *cores > 0) busy = *ps.cpu_cores / *cores;
  for (bool receive : {true, false}) {
    if (auto use = LinkUtilization(ps, receive))
      busy = std::max(busy.value_or(0), use->ratio);
  }
  if (busy) busy = std::min(1.0, *busy);
  return busy;
}

// The cost model of docs/diagnosis.md: the share of their time the job's
// workers spend exchanging with the hot PS, of which a balanced placement
// would leave fair/share. Without exchange times, the PS' busy ratio stands
// in for that share; without either, the skew alone (as if the exchange
// were the whole step: an upper bound).
void SetHotPsImpact(const DetectorInput& in, const PodMeta& meta,
                    const std::string& key, double share, double fair,
                    Diagnosis& d) {
  const double removable = share > 0 ? std::max(0.0, 1 - fair / share) : 0;
  auto pod = in.recent.pods.find(key);
  const std::optional<double> link_busy =
      pod != in.recent.pods.end() ? PsLinkBusyRatio(pod->second) : std::nullopt;
  if (auto wait = WorkerWaitShare(in.recent, meta, key, link_busy)) {
    const std::string model = NoteWorkerWait(*wait, d.evidence);
    SetImpact(d, wait->share * removable, model);
    return;
  }
  if (pod != in.recent.pods.end()) {
    if (auto busy = PsBusyRatio(pod->second)) {
      d.evidence["ps_busy_ratio"] = Round4(*busy);
      SetImpact(d, *busy * removable, "ps_busy_ratio");
      return;
    }
  }
  SetImpact(d, removable, "skew_upper_bound");
}

using Verdicts = std::map<std::string, Verdict>;  // by PS key

// Traffic rule: with few PS, a share over the ratio threshold; from
// `robust_from` PS, a robust z-score over the job's median share.
void ApplyTrafficRule(const JobTraffic& job, const HotPsSettings& s,
                      Verdicts& verdicts) {
  const size_t n = job.ps_traffic.size();
  std::vector<double> shares;
  for (const auto& t : job.ps_traffic) shares.push_back(t.share);
  const double median = Median(shares);
  std::vector<double> deviations;
  for (double x : shares) deviations.push_back(std::fabs(x - median));
  const double mad = std::max(Median(deviations), s.mad_floor_ratio * median);
  const double fair = 1.0 / static_cast<double>(n);
  for (const auto& t : job.ps_traffic) {
    if (t.bytes_per_second < s.min_bytes_per_second) continue;
    if (n < s.robust_from) {
      if (t.share >= HotPsRatioThreshold(n, s)) {
        Raise(verdicts[t.key], Finding::Level::kEnter, "ratio");
      } else if (t.share >= HotPsHoldShare(n, s)) {
        Raise(verdicts[t.key], Finding::Level::kHold, "ratio");
      }
    } else {
      const double z = mad > 0 ? (t.share - median) / (1.4826 * mad) : 0;
      if (z >= s.z_enter && t.share >= s.ratio_factor * fair) {
        Raise(verdicts[t.key], Finding::Level::kEnter, "robust_z");
      } else if (z >= s.z_exit && t.share >= HotPsHoldShare(n, s)) {
        Raise(verdicts[t.key], Finding::Level::kHold, "robust_z");
      }
    }
  }
}

// CPU rule: one PS does the job's PS CPU work while the others idle (among
// the job's PS this window has CPU for, all of them).
void ApplyCpuRule(const DetectorInput& in, const JobTraffic& job,
                  const HotPsSettings& s, Verdicts& verdicts) {
  const size_t n = job.ps_traffic.size();
  std::vector<std::pair<std::string, double>> cpu;
  double cpu_total = 0;
  for (const auto& t : job.ps_traffic) {
    auto it = in.recent.pods.find(t.key);
    if (it == in.recent.pods.end() || !it->second.cpu_cores) continue;
    cpu.emplace_back(t.key, *it->second.cpu_cores);
    cpu_total += *it->second.cpu_cores;
  }
  if (cpu.size() < 2 || cpu.size() != n || cpu_total <= 0) return;
  auto top = std::max_element(
      cpu.begin(), cpu.end(),
      [](const auto& a, const auto& b) { return a.second < b.second; });
  bool others_idle = true;
  for (const auto& [key, cores] : cpu) {
    if (key != top->first && cores >= s.idle_cores) others_idle = false;
  }
  if (!others_idle || top->second < s.min_cpu_cores) return;
  const double share = top->second / cpu_total;
  const double enter = HotPsRatioThreshold(std::min(n, s.robust_from - 1), s);
  if (share >= enter) {
    Raise(verdicts[top->first], Finding::Level::kEnter, "cpu");
  } else if (share >= enter - s.exit_margin) {
    Raise(verdicts[top->first], Finding::Level::kHold, "cpu");
  }
}

// Every PS of the job: its share, bytes/s and CPU, for the evidence.
nlohmann::json PerPsEvidence(const DetectorInput& in, const JobTraffic& job) {
  nlohmann::json per_ps = nlohmann::json::object();
  for (const auto& t : job.ps_traffic) {
    nlohmann::json e = {{"share", Round4(t.share)},
                        {"bytes_per_second", Round4(t.bytes_per_second)}};
    if (auto it = in.recent.pods.find(t.key);
        it != in.recent.pods.end() && it->second.cpu_cores) {
      e["cpu_cores"] = Round4(*it->second.cpu_cores);
    }
    per_ps[t.pod] = std::move(e);
  }
  return per_ps;
}

Finding HotPsFinding(const DetectorInput& in, const JobTraffic& job,
                     const std::string& key, const Verdict& verdict,
                     const HeadroomSettings& headroom) {
  const size_t n = job.ps_traffic.size();
  const double fair = 1.0 / static_cast<double>(n);
  const PsTraffic* hot = nullptr;
  for (const auto& t : job.ps_traffic) {
    if (t.key == key) hot = &t;
  }
  PodMeta meta;
  if (auto it = in.recent.pods.find(key); it != in.recent.pods.end()) {
    meta = it->second.meta;
  } else {
    meta.namespace_name = job.namespace_name;
    meta.pod = hot ? hot->pod : key;
  }
  meta.training_job = job.training_job;
  Finding f;
  f.level = verdict.level;
  f.diagnosis = NewDiagnosis(kHotParameterServer, Severity::kWarning, meta);
  const double share = hot ? hot->share : 0;
  f.diagnosis.evidence = {
      {"rule", verdict.rule},
      {"ps_count", n},
      {"share", Round4(share)},
      {"fair_share", Round4(fair)},
      {"job_ps_bytes_per_second", Round4(job.total_bytes_per_second)},
      {"measured_from", job.perspective},
      {"ps", PerPsEvidence(in, job)}};
  if (verdict.rule == "cpu") {
    f.diagnosis.summary = fmt::format(
        "{} does nearly all of job {}'s parameter-server CPU work while "
        "the other {} PS sit idle.",
        meta.pod, job.training_job, n - 1);
  } else {
    f.diagnosis.summary = fmt::format(
        "{} carries {:.0f}% of job {}'s parameter-server traffic "
        "({} PS, fair share {:.0f}%).",
        meta.pod, share * 100, job.training_job, n, fair * 100);
  }
  SetHotPsImpact(in, meta, key, share, fair, f.diagnosis);
  NoteHeadroom(in.headroom, headroom, f.diagnosis);
  f.diagnosis.recommendations = PartitionRecommendations(
      meta.pod, n,
      JobFramework(in.recent, job.namespace_name, job.training_job));
  return f;
}

}  // namespace

void DetectHotParameterServer(const DetectorInput& in, const HotPsSettings& s,
                              const HeadroomSettings& headroom,
                              std::vector<Finding>& out) {
  for (const auto& job : in.jobs) {
    if (job.ps_traffic.size() < 2) continue;
    Verdicts verdicts;
    ApplyTrafficRule(job, s, verdicts);
    ApplyCpuRule(in, job, s, verdicts);
    for (const auto& [key, verdict] : verdicts)
      out.push_back(HotPsFinding(in, job, key, verdict, headroom));
  }
}

}  // namespace trainscope::diagnosis
