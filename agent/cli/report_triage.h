#pragma once

// Triage of a large cluster before the replay. Replaying every pod of a
// 500-node cluster moves every agent series to the CLI (1.8 M series, minutes
// of CPU: docs/performance.md). Most jobs are healthy, and a detector can only
// fire where its necessary condition holds, so a few instant queries that
// Prometheus answers from its recording rules and small aggregates name the
// jobs, pods and nodes where some detector could be active; only those are
// replayed, with the same detectors as always. Each predicate is a detector's
// necessary condition at its exit (hold) threshold, loosened by
// kTriageMargin, so a condition still held at the end of the range is caught
// (docs/diagnosis.md, "Cluster view of a large cluster").

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "cli/report_batches.h"
#include "cli/report_prometheus.h"
#include "diagnosis/ps_share.h"
#include "diagnosis/settings.h"
#include "trainscope/status.h"

namespace trainscope::cli {

// How far each predicate moves a detector's hold threshold toward healthy:
// an absolute floor is multiplied by it; a share or a ratio to the peers'
// median keeps this fraction of its distance from the healthy value (the
// fair share, 1x the median). The triage reads one-minute rates where the
// detectors read 30 s windows, so it must not ask for as much.
inline constexpr double kTriageMargin = 0.8;

enum class TriageMode { kAuto, kOn, kOff };

// "auto" (triage when the cluster needs more than one batch), "on", "off".
bool ParseTriageMode(const std::string& text, TriageMode* mode);
const char* TriageModeName(TriageMode mode);

// The instant queries of the triage, evaluated at the end of the range.
// `base` holds the report's matchers (namespace, job, --selector; "" = all),
// `node_matchers` those of node series (--selector), `range_seconds` the
// evaluated range.
std::vector<PromQuery> TriageQueries(const std::string& base,
                                     const std::string& node_matchers,
                                     double range_seconds);

// The same PS figures from the agents' raw series, for a Prometheus without
// Trainscope's recording rules (much slower at scale: the answer logs it).
std::vector<PromQuery> TriageFallbackQueries(const std::string& base);

// What the triage flags, and why.
struct Suspects {
  std::set<std::pair<std::string, std::string>> jobs;  // (namespace, job)
  std::set<std::pair<std::string, std::string>> pods;  // (namespace, pod)
  std::set<std::string> nodes;
  // Predicate name -> jobs, pods and nodes it flagged (the report says it).
  std::map<std::string, size_t> flagged_by;
  // Cluster-wide PS traffic of every PS job, from the recording rules: the
  // report's PS shares for the jobs that are not replayed.
  std::vector<diagnosis::JobTraffic> traffic;
  bool used_recording_rules = true;
};

// Judges the answers (`data.result` vectors keyed by PromQuery::name) against
// the detectors' settings. Pure: the tests feed it recorded answers. An
// unexpected shape is an error naming the query.
Status JudgeTriage(const std::map<std::string, nlohmann::json>& answers,
                   const std::vector<PodRef>& roster,
                   const diagnosis::DiagnosisSettings& settings, Suspects* out);

// The pods to replay: with their whole jobs, every pod of a flagged job and
// every flagged pod; on their own (a node link and pod findings only), the
// other training pods on a flagged node. A node holds pods of dozens of
// jobs: replaying them all whole would replay a large part of the cluster
// for one full NIC.
struct Replay {
  std::vector<PodRef> whole_jobs;
  std::vector<PodRef> pods_on_flagged_nodes;
};
Replay PodsToReplay(const std::vector<PodRef>& roster,
                    const Suspects& suspects);

}  // namespace trainscope::cli
