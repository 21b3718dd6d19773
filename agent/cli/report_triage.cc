#include "cli/report_triage.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <optional>

#include "cli/server_text.h"
#include "diagnosis/detectors.h"
#include "trainscope/metric_names.h"
#include "trainscope/pod.h"
#include "trainscope/strict_number.h"

namespace trainscope::cli {
namespace {

using diagnosis::DiagnosisSettings;
using NamespacedName = std::pair<std::string, std::string>;

// The recorded series the triage reads (dashboards/mixin/rules/rules.libsonnet,
// trainscope.ps-traffic.rules): per PS and per worker, bytes/s both ways.
constexpr const char* kPsTrafficRecord =
    "training_job_pod:trainscope_ps_traffic_bytes:rate1m";
constexpr const char* kWorkerTrafficRecord =
    "training_job_pod:trainscope_worker_ps_traffic_bytes:rate1m";
// Worker-side PS traffic as the rules select it.
constexpr const char* kWorkerToPs =
    "role=~\"worker|chief|master\",peer_role=\"ps\",training_job!=\"\"";

std::string Selector(const std::string& metric, const std::string& base,
                     const std::string& more = "") {
  std::string matchers = base;
  if (!more.empty()) matchers += (matchers.empty() ? "" : ",") + more;
  return metric + "{" + matchers + "}";
}

// A sample value of an instant-vector series; nullopt when not a finite
// number (Prometheus writes NaN and Inf as strings), an error when the
// value is no number at all (trainscope/strict_number.h).
Status ValueOf(const nlohmann::json& series, std::optional<double>* out) {
  *out = std::nullopt;
  const auto it = series.find("value");
  if (it == series.end() || !it->is_array() || it->size() != 2 ||
      !(*it)[1].is_string()) {
    return Status::Ok();
  }
  const auto& text = (*it)[1].get_ref<const std::string&>();
  const auto v = ParsePrometheusValue(text);
  if (!v) {
    return Status::Error(
        "sample value '" + ServerText(text, 40) + "' is not a number in " +
        ServerText(series.value("metric", nlohmann::json()).dump(), 200));
  }
  if (std::isfinite(*v)) *out = *v;
  return Status::Ok();
}

// Calls `fn(metric, value)` for every series of an answer; an answer that is
// not a vector of labelled series is an error naming the query.
Status ForEachSample(
    const std::map<std::string, nlohmann::json>& answers,
    const std::string& name,
    const std::function<void(const nlohmann::json&, double)>& fn) {
  const auto it = answers.find(name);
  if (it == answers.end()) return Status::Ok();
  if (!it->second.is_array()) {
    return Status::Error("triage query " + name + " gave no vector");
  }
  for (const auto& series : it->second) {
    if (!series.is_object() || !series.contains("metric") ||
        !series["metric"].is_object()) {
      return Status::Error(
          "triage query " + name +
          " gave a series without labels: " + ServerText(series.dump(), 200));
    }
    std::optional<double> v;
    if (Status s = ValueOf(series, &v); !s.ok()) {
      return Status::Error("triage query " + name + ": " + s.message());
    }
    if (v) fn(series["metric"], *v);
  }
  return Status::Ok();
}

// A threshold loosened toward what a healthy job shows (`healthy`: the
// fair share, a ratio of 1 to the median) by kTriageMargin of the way.
double Loosened(double healthy, double threshold) {
  return healthy + kTriageMargin * (threshold - healthy);
}

// The median of `sorted` with one instance of `value` left out.
double MedianWithout(const std::vector<double>& sorted, double value) {
  std::vector<double> others = sorted;
  if (auto it = std::lower_bound(others.begin(), others.end(), value);
      it != others.end() && *it == value) {
    others.erase(it);
  }
  return diagnosis::Median(std::move(others));
}

struct PodValue {
  std::string pod;
  std::string role;
  double value = 0;
};
using ByJob = std::map<NamespacedName, std::vector<PodValue>>;

class Judge {
 public:
  Judge(const std::vector<PodRef>& roster, const DiagnosisSettings& settings,
        Suspects* out)
      : s_(settings), out_(out) {
    for (const auto& p : roster) {
      if (ParseRole(p.role) == Role::kPs && !p.training_job.empty()) {
        ps_of_job_[{p.namespace_name, p.training_job}].insert(p.pod);
      }
    }
  }

  Status Run(const std::map<std::string, nlohmann::json>& answers) {
    if (Status s = Verdicts(answers); !s.ok()) return s;
    if (Status s = PsTraffic(answers); !s.ok()) return s;
    if (Status s = WorkerExchange(answers); !s.ok()) return s;
    if (Status s = PsCpu(answers); !s.ok()) return s;
    if (Status s = Causes(answers); !s.ok()) return s;
    if (Status s = StoppedSteps(answers); !s.ok()) return s;
    return NodeLinks(answers);
  }

 private:
  void FlagJob(const std::string& ns, const std::string& job,
               const std::string& why) {
    if (out_->jobs.insert({ns, job}).second) ++out_->flagged_by[why];
  }
  void FlagPod(const nlohmann::json& metric, const std::string& why) {
    const std::string ns = LabelOf(metric, "namespace");
    const std::string job = LabelOf(metric, "training_job");
    if (!job.empty()) return FlagJob(ns, job, why);
    const std::string pod = LabelOf(metric, "pod");
    if (!pod.empty() && out_->pods.insert({ns, pod}).second) {
      ++out_->flagged_by[why];
    }
  }
  void FlagNode(const std::string& node, const std::string& why) {
    if (!node.empty() && out_->nodes.insert(node).second) {
      ++out_->flagged_by[why];
    }
  }

  // Values per job of an answer keyed by pod; `resource` keeps only the
  // series of that PSI resource.
  Status Collect(const std::map<std::string, nlohmann::json>& answers,
                 const std::string& name, ByJob* by_job,
                 const std::string& resource = "") {
    return ForEachSample(answers, name, [&](const auto& m, double v) {
      const std::string job = LabelOf(m, "training_job");
      if (job.empty()) return;
      if (!resource.empty() && LabelOf(m, "resource") != resource) return;
      (*by_job)[{LabelOf(m, "namespace"), job}].push_back(
          {LabelOf(m, "pod"), LabelOf(m, "role"), v});
    });
  }

  // The node views' own verdicts: every single-pod kind (throttling,
  // memory, GPU, a pod's link, a PS' CPU) is judged by the agent next to
  // the pod on 5 s samples, and a by-cause straggler only enters where the
  // cause is at its single-pod enter threshold (ranks.cc uses the same
  // thresholds), so a pod or job that no node view ever flagged in the
  // range holds none of them.
  Status Verdicts(const std::map<std::string, nlohmann::json>& answers) {
    return ForEachSample(answers, "verdicts", [&](const auto& m, double) {
      if (!LabelOf(m, "pod").empty() || !LabelOf(m, "training_job").empty()) {
        FlagPod(m, "node_view");
      } else {
        FlagNode(LabelOf(m, "node"), "node_view");
      }
    });
  }

  // training_stalled: a worker whose step rate the agent read in the range
  // and reads no more (its exchanges stopped). Where every rank waits, no
  // node view that holds part of the job can say which differs, so no
  // verdict flags the job.
  Status StoppedSteps(const std::map<std::string, nlohmann::json>& answers) {
    return ForEachSample(answers, "stopped_steps",
                         [&](const auto& m, double) { FlagPod(m, "stopped"); });
  }

  // hot_parameter_server by traffic: the busiest PS' share at the least
  // share the detector holds at, with the job's PS count from the roster.
  Status PsTraffic(const std::map<std::string, nlohmann::json>& answers) {
    ByJob jobs;
    if (Status s = Collect(answers, "ps_traffic", &jobs); !s.ok()) return s;
    const auto& hot = s_.hot_ps;
    for (auto& [key, ps] : jobs) {
      std::sort(ps.begin(), ps.end(),
                [](const auto& a, const auto& b) { return a.pod < b.pod; });
      double total = 0;
      for (const auto& p : ps) total += p.value;
      RecordTraffic(key, ps, total);
      const size_t n = std::max(ps.size(), ps_of_job_[key].size());
      if (n < 2 || total <= 0) continue;
      const auto top = std::max_element(
          ps.begin(), ps.end(),
          [](const auto& a, const auto& b) { return a.value < b.value; });
      const double fair = 1.0 / static_cast<double>(n);
      if (top->value >= kTriageMargin * hot.min_bytes_per_second &&
          top->value / total >=
              Loosened(fair, diagnosis::HotPsHoldShare(n, hot))) {
        FlagJob(key.first, key.second, "ps_traffic_share");
      }
    }
    return Status::Ok();
  }

  void RecordTraffic(const NamespacedName& key, const std::vector<PodValue>& ps,
                     double total) {
    diagnosis::JobTraffic t;
    t.namespace_name = key.first;
    t.training_job = key.second;
    t.perspective = diagnosis::kFromWorkers;
    t.total_bytes_per_second = total;
    const auto& known = ps_of_job_[key];
    t.ps.assign(known.begin(), known.end());
    for (const auto& p : ps) {
      t.ps_traffic.push_back({key.first + "/" + p.pod, p.pod, p.value,
                              total > 0 ? p.value / total : 0});
    }
    out_->traffic.push_back(std::move(t));
  }

  // straggler_worker by exchange: a worker below exit_ratio of the other
  // workers' median (loosened), in a job busy enough to judge.
  Status WorkerExchange(const std::map<std::string, nlohmann::json>& answers) {
    ByJob jobs;
    if (Status s = Collect(answers, "worker_traffic", &jobs); !s.ok()) {
      return s;
    }
    const auto& st = s_.straggler;
    for (const auto& [key, workers] : jobs) {
      if (workers.size() < st.min_workers) continue;
      std::vector<double> sorted;
      for (const auto& w : workers) sorted.push_back(w.value);
      std::sort(sorted.begin(), sorted.end());
      for (const auto& w : workers) {
        const double median = MedianWithout(sorted, w.value);
        if (median >= kTriageMargin * st.min_median_bytes_per_second &&
            w.value < median * Loosened(1.0, st.exit_ratio)) {
          FlagJob(key.first, key.second, "worker_exchange");
          break;
        }
      }
    }
    return Status::Ok();
  }

  // hot_parameter_server by CPU: one busy PS while the others idle.
  Status PsCpu(const std::map<std::string, nlohmann::json>& answers) {
    ByJob jobs;
    if (Status s = Collect(answers, "ps_cpu", &jobs); !s.ok()) return s;
    const auto& hot = s_.hot_ps;
    for (auto& [key, ps] : jobs) {
      if (ps.size() < 2) continue;
      std::sort(ps.begin(), ps.end(),
                [](const auto& a, const auto& b) { return a.value > b.value; });
      if (ps[0].value >= kTriageMargin * hot.min_cpu_cores &&
          ps[1].value < hot.idle_cores / kTriageMargin) {
        FlagJob(key.first, key.second, "ps_cpu");
      }
    }
    return Status::Ok();
  }

  // Causes no node view judges alone: CPU limit use (also a PS' CPU
  // saturation), CPU stall, and IO stall (input_io_bound compares a
  // worker's exchange with the job's other workers on every node).
  Status Causes(const std::map<std::string, nlohmann::json>& answers) {
    ByJob use, stall, io;
    if (Status s = Collect(answers, "cpu_limit_use", &use); !s.ok()) return s;
    if (Status s = Collect(answers, "pressure", &stall, "cpu"); !s.ok()) {
      return s;
    }
    if (Status s = Collect(answers, "pressure", &io, "io"); !s.ok()) return s;
    const auto& r = s_.rank_cause;
    for (const auto& [key, pods] : use) {
      for (const auto& p : pods) {
        if (ParseRole(p.role) == Role::kPs &&
            p.value >= kTriageMargin * s_.ps_cpu.exit_ratio) {
          FlagJob(key.first, key.second, "ps_cpu_limit_use");
        }
      }
      FlagStandingOut(key, pods, r.cpu_limit_use_exit, "cpu_limit_use");
    }
    for (const auto& [key, pods] : stall) {
      FlagStandingOut(key, pods, r.cpu_stall_exit, "cpu_stall");
    }
    for (const auto& [key, pods] : io) {
      for (const auto& p : pods) {
        if (p.value >= kTriageMargin * s_.input_io.psi_exit) {
          FlagJob(key.first, key.second, "io_stall");
        }
      }
    }
    return Status::Ok();
  }

  // A rank standing out by a cause (ranks.cc): above the cause's floor and,
  // from robust_from ranks on, above hold_factor x the others' median.
  void FlagStandingOut(const NamespacedName& key,
                       const std::vector<PodValue>& pods, double floor,
                       const std::string& why) {
    const auto& r = s_.rank_cause;
    std::vector<double> sorted;
    for (const auto& p : pods) sorted.push_back(p.value);
    std::sort(sorted.begin(), sorted.end());
    for (const auto& p : pods) {
      if (p.value < kTriageMargin * floor) continue;
      if (pods.size() < r.robust_from ||
          p.value >=
              Loosened(1.0, r.hold_factor) * MedianWithout(sorted, p.value)) {
        FlagJob(key.first, key.second, why);
        return;
      }
    }
  }

  // network_saturated for a node link, in the fuller direction.
  Status NodeLinks(const std::map<std::string, nlohmann::json>& answers) {
    const double floor = kTriageMargin * std::min(s_.network.exit_ratio,
                                                  s_.allreduce_link.exit_ratio);
    return ForEachSample(answers, "node_link", [&](const auto& m, double v) {
      if (v >= floor) FlagNode(LabelOf(m, "node"), "node_link");
    });
  }

  const DiagnosisSettings& s_;
  Suspects* out_;
  std::map<NamespacedName, std::set<std::string>> ps_of_job_;
};

// Each node link's fuller direction, against the NIC speed the agent
// reports.
std::string NodeLinkQuery(const std::string& node_matchers) {
  std::string either;
  for (const auto& [direction, metric] :
       {std::pair{"receive", kNodeNetworkReceiveBytesTotal},
        std::pair{"transmit", kNodeNetworkTransmitBytesTotal}}) {
    if (!either.empty()) either += " or ";
    either += fmt::format(
        "label_replace(max by (node) (rate({}[1m]) / on (node, device) "
        "group_left () max by (node, device) ({} > 0)), \"direction\", "
        "\"{}\", \"\", \"\")",
        Selector(std::string(metric), node_matchers),
        Selector(std::string(kNodeNetworkSpeedBytes), node_matchers),
        direction);
  }
  return "max by (node) (" + either + ")";
}

}  // namespace

constexpr std::pair<TriageMode, const char*> kTriageModes[] = {
    {TriageMode::kAuto, "auto"},
    {TriageMode::kOn, "on"},
    {TriageMode::kOff, "off"},
};

bool ParseTriageMode(const std::string& text, TriageMode* mode) {
  for (const auto& [value, name] : kTriageModes) {
    if (text == name) {
      *mode = value;
      return true;
    }
  }
  return false;
}

const char* TriageModeName(TriageMode mode) {
  for (const auto& [value, name] : kTriageModes) {
    if (value == mode) return name;
  }
  return "auto";
}

std::vector<PromQuery> TriageQueries(const std::string& base,
                                     const std::string& node_matchers,
                                     double range_seconds) {
  const std::string training = "training_job!=\"\"";
  const auto range = static_cast<long long>(range_seconds);
  return {
      {"node_link", NodeLinkQuery(node_matchers)},
      {"verdicts",
       fmt::format("max by (namespace, pod, training_job, node) "
                   "(max_over_time({}[{}s]))",
                   Selector(std::string(kDiagnosisActive), base), range)},
      {"ps_traffic", Selector(kPsTrafficRecord, base)},
      {"worker_traffic", Selector(kWorkerTrafficRecord, base)},
      {"stopped_steps",
       fmt::format("max by (namespace, training_job, pod) "
                   "(max_over_time({0}[{1}s])) unless "
                   "max by (namespace, training_job, pod) ({0})",
                   Selector(std::string(kWorkerStepsPerSecond), base), range)},
      {"ps_cpu", fmt::format("sum by (namespace, training_job, pod) "
                             "(rate({}[1m]))",
                             Selector(std::string(kPodCpuUsageSecondsTotal),
                                      base, "role=\"ps\"," + training))},
      {"cpu_limit_use",
       fmt::format(
           "sum by (namespace, training_job, pod, role) (rate({}[1m])) / "
           "sum by (namespace, training_job, pod, role) ({} > 0)",
           Selector(std::string(kPodCpuUsageSecondsTotal), base, training),
           Selector(std::string(kPodCpuLimitCores), base, training))},
      {"pressure",
       fmt::format(
           "sum by (namespace, training_job, pod, resource) (rate({}[1m]))",
           Selector(std::string(kPodPressureWaitingSecondsTotal), base,
                    "resource=~\"cpu|io\"," + training))},
  };
}

std::vector<PromQuery> TriageFallbackQueries(const std::string& base) {
  // The rules' expressions (both directions, summed per PS and per worker)
  // over the raw series.
  std::vector<PromQuery> out;
  for (const auto& [name, by, relabel] :
       {std::tuple{"ps_traffic", "peer_pod", true},
        std::tuple{"worker_traffic", "pod", false}}) {
    std::string sum;
    for (std::string_view metric :
         {kPeerReceiveBytesTotal, kPeerTransmitBytesTotal}) {
      if (!sum.empty()) sum += " + ";
      sum += fmt::format("sum by (namespace, training_job, {}) (rate({}[1m]))",
                         by, Selector(std::string(metric), base, kWorkerToPs));
    }
    out.push_back({name, relabel ? "label_replace(" + sum +
                                       ", \"pod\", \"$1\", \"peer_pod\", "
                                       "\"(.*)\")"
                                 : sum});
  }
  return out;
}

Status JudgeTriage(const std::map<std::string, nlohmann::json>& answers,
                   const std::vector<PodRef>& roster,
                   const DiagnosisSettings& settings, Suspects* out) {
  return Judge(roster, settings, out).Run(answers);
}

Replay PodsToReplay(const std::vector<PodRef>& roster,
                    const Suspects& suspects) {
  Replay out;
  for (const auto& p : roster) {
    const bool on_node = suspects.nodes.count(p.node) > 0;
    if (p.training_job.empty()) {
      if (suspects.pods.count({p.namespace_name, p.pod}) > 0 || on_node) {
        out.whole_jobs.push_back(p);
      }
    } else if (suspects.jobs.count({p.namespace_name, p.training_job}) > 0) {
      out.whole_jobs.push_back(p);
    } else if (on_node) {
      out.pods_on_flagged_nodes.push_back(p);
    }
  }
  return out;
}

}  // namespace trainscope::cli
