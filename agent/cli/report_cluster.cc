#include "cli/report_cluster.h"

#include <algorithm>
#include <future>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <utility>

#include "cli/report_batches.h"
#include "cli/server_text.h"
#include "diagnosis/analysis.h"
#include "diagnosis/detectors.h"
#include "diagnosis/fold_causes.h"

namespace trainscope::cli {
namespace {

size_t BatchLimit(const ClusterViewQuery& q) {
  return q.batch_series > 0 ? q.batch_series
                            : std::numeric_limits<size_t>::max();
}

// Two steps without a sample: the agent is down or unreachable, so its pods
// are judged on what it sent before (a scrape may lag one step).
double MissingGrace(const ClusterViewQuery& q) {
  return std::max(2 * q.step_seconds, 30.0);
}

using Answers = std::map<std::string, nlohmann::json>;

// Instant queries at the end of the range, all in flight at once (the
// triage's are small aggregates; Prometheus evaluates them in parallel).
Status QueryAll(const HttpTarget& target, const ClusterViewQuery& q,
                const std::vector<PromQuery>& queries, Answers* answers) {
  std::vector<std::future<std::pair<Status, nlohmann::json>>> pending;
  for (const auto& query : queries) {
    pending.push_back(std::async(std::launch::async, [&target, &q, query] {
      nlohmann::json result;
      Status s = QueryPrometheus(
          target, q.prometheus, "/api/v1/query",
          {{"query", query.promql}, {"time", std::to_string(q.end)}}, "vector",
          &result);
      return std::make_pair(std::move(s), std::move(result));
    }));
  }
  Status first = Status::Ok();
  for (size_t i = 0; i < pending.size(); ++i) {
    auto [s, result] = pending[i].get();
    if (!s.ok() && first.ok()) first = std::move(s);
    (*answers)[queries[i].name] = std::move(result);
  }
  return first;
}

Status ReadRoster(const HttpTarget& target, const ClusterViewQuery& q,
                  const std::string& base, std::vector<PodRef>* pods) {
  Answers answers;
  if (Status s = QueryAll(target, q,
                          {{"roster", PodRosterQuery(base, q.range_seconds)}},
                          &answers);
      !s.ok()) {
    return s;
  }
  if (Status s = PodRefsFromVector(answers["roster"], pods); !s.ok()) {
    return Status::Error(q.prometheus + ": " + s.message());
  }
  return Status::Ok();
}

bool HasPsJob(const std::vector<PodRef>& roster) {
  return std::any_of(roster.begin(), roster.end(), [](const PodRef& p) {
    return !p.training_job.empty() && ParseRole(p.role) == Role::kPs;
  });
}

// The triage's answers: from the recording rules, or from the raw series
// when this Prometheus has none of Trainscope's rules.
Status TriageAnswers(const HttpTarget& target, const ClusterViewQuery& q,
                     std::future<std::pair<Status, Answers>>& started,
                     const std::vector<PodRef>& roster, Answers* answers,
                     bool* recording_rules) {
  auto [status, got] = started.get();
  if (!status.ok()) return status;
  *answers = std::move(got);
  *recording_rules = !(*answers)["ps_traffic"].empty() ||
                     !(*answers)["worker_traffic"].empty() || !HasPsJob(roster);
  if (*recording_rules) return Status::Ok();
  std::cerr << "trainscope report: " << q.prometheus
            << " has no Trainscope recording rules (daemonset/base/"
               "prometheusrule.yaml); the triage sums the raw peer series "
               "instead, which is much slower on a large cluster\n";
  const std::string base =
      FilterMatchers(q.namespace_name, q.training_job, q.extra_matchers);
  return QueryAll(target, q, TriageFallbackQueries(base), answers);
}

// The triage's pods as the report's job list, and its PS traffic for the
// jobs that are not replayed (the replayed ones have their own).
void AddTriagedJobs(const std::vector<PodRef>& roster, Suspects& suspects,
                    ClusterEvaluation* out) {
  for (const auto& p : roster) {
    if (p.training_job.empty()) continue;
    PodInfo info;
    info.namespace_name = p.namespace_name;
    info.name = p.pod;
    info.training_job = p.training_job;
    info.role = ParseRole(p.role).value_or(Role::kUnknown);
    info.node = p.node;
    out->pods.push_back(std::move(info));
  }
  for (auto& t : suspects.traffic) {
    const bool replayed =
        std::any_of(out->jobs.begin(), out->jobs.end(), [&t](const auto& j) {
          return j.namespace_name == t.namespace_name &&
                 j.training_job == t.training_job;
        });
    if (!replayed) out->jobs.push_back(std::move(t));
  }
}

size_t JobsOf(const std::vector<PodRef>& pods) {
  std::set<std::pair<std::string, std::string>> jobs;
  for (const auto& p : pods) {
    if (!p.training_job.empty())
      jobs.insert({p.namespace_name, p.training_job});
  }
  return jobs.size();
}

std::string WithMatcher(const std::string& base, const std::string& matcher) {
  return base.empty() ? matcher : base + "," + matcher;
}

// The pods to replay after the triage (PodsToReplay), with the pods of no
// job it flagged and the pods of no job on flagged nodes (read now: the
// triage's roster holds training pods only).
Status ReplayAfterTriage(const HttpTarget& target, const ClusterViewQuery& q,
                         const std::string& base,
                         const std::vector<PodRef>& roster,
                         const Suspects& suspects, Replay* replay) {
  *replay = PodsToReplay(roster, suspects);
  for (const auto& [ns, pod] : suspects.pods) {
    replay->whole_jobs.push_back({ns, pod, "", "", ""});
  }
  if (suspects.nodes.empty()) return Status::Ok();
  std::vector<std::string> nodes(suspects.nodes.begin(), suspects.nodes.end());
  std::vector<PodRef> loose;
  if (Status s = ReadRoster(
          target, q,
          WithMatcher(base, "training_job=\"\",node=~" +
                                PromQLString(ExactAlternatives(nodes))),
          &loose);
      !s.ok()) {
    return s;
  }
  replay->whole_jobs.insert(replay->whole_jobs.end(), loose.begin(),
                            loose.end());
  return Status::Ok();
}

// The triage of a cluster whose training pods are `roster`: its answers
// judged, the flagged pods cut into batches.
Status PlanTriagedBatches(const HttpTarget& target, const ClusterViewQuery& q,
                          const std::string& base,
                          std::future<std::pair<Status, Answers>>& triage,
                          const std::vector<PodRef>& roster,
                          std::vector<Batch>* batches, Suspects* suspects,
                          ClusterEvaluation* out) {
  TriageSummary& summary = out->triage;
  Answers answers;
  if (Status s = TriageAnswers(target, q, triage, roster, &answers,
                               &summary.recording_rules);
      !s.ok()) {
    return s;
  }
  if (Status s = JudgeTriage(answers, roster, diagnosis::DiagnosisSettings{},
                             suspects);
      !s.ok()) {
    return Status::Error(q.prometheus + ": " + s.message());
  }
  Replay replay;
  if (Status s = ReplayAfterTriage(target, q, base, roster, *suspects, &replay);
      !s.ok()) {
    return s;
  }
  batches->clear();
  if (!replay.whole_jobs.empty()) {
    *batches = PlanBatches(replay.whole_jobs, BatchLimit(q), base,
                           /*subset=*/true);
  }
  for (auto& b :
       PlanPodBatches(replay.pods_on_flagged_nodes, BatchLimit(q), base)) {
    batches->push_back(std::move(b));
  }
  summary.used = true;
  summary.jobs = JobsOf(roster);
  summary.jobs_replayed = JobsOf(replay.whole_jobs);
  summary.training_pods = roster.size();
  summary.pods_replayed = replay.whole_jobs.size();
  summary.pods_without_jobs_replayed = replay.pods_on_flagged_nodes.size();
  summary.flagged_by = suspects->flagged_by;
  return Status::Ok();
}

// The batches to read: the whole cluster at once when it is small, else
// whole jobs and loose pods of about `--batch-series` series at a time
// (report_batches.h); on a large cluster only what the triage flags. The
// triage starts with the training pods alone (a third of a large cluster's
// pods): when they already need several batches, the others are never
// listed.
Status PlanClusterBatches(const HttpTarget& target, const ClusterViewQuery& q,
                          std::vector<Batch>* batches,
                          std::vector<PodRef>* roster, Suspects* suspects,
                          ClusterEvaluation* out) {
  const std::string base =
      FilterMatchers(q.namespace_name, q.training_job, q.extra_matchers);
  if (q.batch_series == 0 && q.triage != TriageMode::kOn) {
    *batches = {Batch{{base}, 0}};
    return Status::Ok();
  }
  if (q.triage == TriageMode::kOff) {
    if (Status s = ReadRoster(target, q, base, roster); !s.ok()) return s;
    *batches = PlanBatches(*roster, BatchLimit(q), base);
    return Status::Ok();
  }
  // The triage's queries run while the roster is read; auto mode drops
  // their answers when one batch holds the cluster.
  std::future<std::pair<Status, Answers>> triage =
      std::async(std::launch::async, [&target, &q, &base] {
        Answers answers;
        Status s = QueryAll(
            target, q, TriageQueries(base, q.extra_matchers, q.range_seconds),
            &answers);
        return std::make_pair(std::move(s), std::move(answers));
      });
  Status status =
      ReadRoster(target, q, WithMatcher(base, "training_job!=\"\""), roster);
  if (status.ok() && q.triage == TriageMode::kAuto &&
      PlanBatches(*roster, BatchLimit(q), base).size() <= 1) {
    // The training pods fit one batch: list every pod; triage only if the
    // others make the cluster several batches.
    roster->clear();
    status = ReadRoster(target, q, base, roster);
    *batches = PlanBatches(*roster, BatchLimit(q), base);
    if (status.ok() && batches->size() <= 1) {
      triage.wait();
      return Status::Ok();
    }
    std::erase_if(*roster,
                  [](const PodRef& p) { return p.training_job.empty(); });
  }
  if (!status.ok()) {
    triage.wait();
    return status;
  }
  return PlanTriagedBatches(target, q, base, triage, *roster, batches, suspects,
                            out);
}

// One range query over the report's range and step.
Status QueryRange(const HttpTarget& target, const ClusterViewQuery& q,
                  const std::string& promql, nlohmann::json* result) {
  return QueryPrometheus(target, q.prometheus, "/api/v1/query_range",
                         {{"query", promql},
                          {"start", std::to_string(q.end - q.range_seconds)},
                          {"end", std::to_string(q.end)},
                          {"step", std::to_string(q.step_seconds)}},
                         "matrix", result);
}

// Nodes whose agents stopped reporting, when no batch read the node series.
Status FindMissingNodes(const HttpTarget& target, const ClusterViewQuery& q,
                        ClusterEvaluation* out) {
  for (const auto& query :
       ClusterQueries(std::vector<std::string>{""}, q.extra_matchers)) {
    if (query.name != "node_cpus") continue;
    nlohmann::json result;
    if (Status s = QueryRange(target, q, query.promql, &result); !s.ok()) {
      return s;
    }
    out->missing = MissingNodes(result, q.end, MissingGrace(q));
  }
  return Status::Ok();
}

// One batch: its series over the range into a window (each answer dropped
// once added), replayed through the detectors.
Status EvaluateBatch(const HttpTarget& target, const ClusterViewQuery& q,
                     const Batch& batch, ClusterEvaluation* out) {
  WindowBuilder builder;
  const double grace = MissingGrace(q);
  for (const auto& query :
       ClusterQueries(batch.matcher_sets, q.extra_matchers)) {
    nlohmann::json result;
    if (Status s = QueryRange(target, q, query.promql, &result); !s.ok()) {
      return s;
    }
    // Node series are the same in every batch: the first one judges them.
    if (query.name == "node_cpus" && out->batches == 0) {
      out->missing = MissingNodes(result, q.end, grace);
    }
    if (Status s = builder.Add(query.name, result); !s.ok()) {
      return Status::Error(q.prometheus + ": " + s.message());
    }
  }
  const diagnosis::Window window = builder.Finish();
  diagnosis::ReplayResult replay =
      diagnosis::Replay(window, diagnosis::DiagnosisSettings{});
  if (batch.pods_without_jobs) {
    // Parts of jobs: their job findings and PS traffic are not the jobs'.
    std::erase_if(replay.active, [](const diagnosis::Diagnosis& d) {
      return diagnosis::JudgesWholeJob(d.kind);
    });
    replay.jobs.clear();
    replay.speeds.clear();
    replay.headroom.clear();
  }
  std::move(replay.active.begin(), replay.active.end(),
            std::back_inserter(out->diagnoses));
  std::move(replay.jobs.begin(), replay.jobs.end(),
            std::back_inserter(out->jobs));
  std::move(replay.speeds.begin(), replay.speeds.end(),
            std::back_inserter(out->speeds));
  std::move(replay.headroom.begin(), replay.headroom.end(),
            std::back_inserter(out->headroom));
  // A triaged report lists every job from the roster already.
  if (!out->triage.used) {
    for (auto& pod : PodsOfWindow(window)) {
      if (!pod.training_job.empty()) out->pods.push_back(std::move(pod));
    }
  }
  out->pods_seen += window.pods.size();
  out->evaluations = std::max(out->evaluations, replay.evaluations);
  ++out->batches;
  return Status::Ok();
}

}  // namespace

Status EvaluateCluster(const HttpTarget& target, const ClusterViewQuery& query,
                       ClusterEvaluation* out) {
  std::vector<Batch> batches;
  std::vector<PodRef> roster;
  Suspects suspects;
  if (Status s =
          PlanClusterBatches(target, query, &batches, &roster, &suspects, out);
      !s.ok()) {
    return s;
  }
  for (const auto& batch : batches) {
    if (Status s = EvaluateBatch(target, query, batch, out); !s.ok()) return s;
  }
  if (out->batches == 0) {
    if (Status s = FindMissingNodes(target, query, out); !s.ok()) return s;
  }
  if (out->triage.used) {
    AddTriagedJobs(roster, suspects, out);
    out->pods_seen = std::max(out->pods_seen, roster.size());
  }
  const diagnosis::DiagnosisSettings settings;
  out->diagnoses = diagnosis::MergeNodeLinkDiagnoses(std::move(out->diagnoses),
                                                     settings.network);
  // Last, over every batch: a partial job's stragglers are gone by now, so
  // no cause is folded into an entry that is not shown.
  out->diagnoses = diagnosis::FoldSamePodCauses(std::move(out->diagnoses));
  return Status::Ok();
}

}  // namespace trainscope::cli
