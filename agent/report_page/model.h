#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

// The kind names only (header-only constants; the page needs no detector).
#include "diagnosis/diagnosis.h"

namespace trainscope::page {

// What the page shows, read from the report JSON (DESIGN.md's
// /api/v1/report plus the optional per-job traffic fields). Reading never
// throws: a field of the wrong type counts as absent, so an older agent's
// report still renders, with less detail.

struct PodMark {
  std::string kind;
  std::string severity;  // critical | warning | info
};

struct PodView {
  std::string name;
  std::string node;  // "" when unknown
  // PS: all of its traffic with the job; worker: its exchange with the PS.
  std::optional<double> bytes_per_second;
  std::optional<double> share;  // PS only: of the job's PS traffic
  std::vector<PodMark> marks;
  bool hot = false;        // hot_parameter_server diagnosed
  bool straggler = false;  // straggler_worker diagnosed
};

struct LinkView {
  size_t worker = 0;  // index into JobView::workers
  size_t ps = 0;      // index into JobView::ps
  double bytes_per_second = 0;
};

struct JobView {
  std::string namespace_name;
  std::string training_job;
  std::vector<PodView> ps;       // by name
  std::vector<PodView> workers;  // by name
  std::vector<LinkView> links;
  double ps_bytes_per_second = 0;  // sum over the PS
  std::string measured_from;       // "workers" | "ps" | "some_ps" | ""
  // The scaling forecast (jobs[].headroom): the fullest shared resource in
  // words and how many workers the job can run before it is full.
  struct Headroom {
    std::string bottleneck;  // "ctr-ps-0's transmit link"
    double utilization = 0;  // of that resource, 0..1
    double workers = 0, max_workers = 0;
  };
  std::optional<Headroom> headroom;
  std::vector<size_t> diagnoses;  // indexes into ReportModel::diagnoses
  bool stalled = false;           // a training_stalled diagnosis names it
};

// One rank of a stalled job (a training_stalled diagnosis's
// evidence.ranks): what it does while the job makes no step.
struct RankView {
  std::string pod, node, role;
  std::string state;      // R S D T Z or "-" (the dominant process state)
  std::string processes;  // "1R 2S": processes per state
  std::optional<double> cpu_cores, quiet_seconds;
  std::optional<double> transmit_bytes_per_second, receive_bytes_per_second;
  bool suspect = false;
  std::string unanswered_peer;  // "ns/pod" it waits on, or ""
};

struct DiagnosisView {
  std::string kind, severity, namespace_name, training_job, pod, node, since,
      summary;
  nlohmann::json evidence;  // object (may be empty)
  std::vector<std::string> recommendations;
  std::vector<RankView> ranks;  // training_stalled only
  bool Stalled() const { return kind == diagnosis::kTrainingStalled; }
};

struct ReportModel {
  std::string node;  // "cluster" for the cluster view
  std::string generated_at;
  std::string source;  // e.g. the Prometheus URL of a cluster view
  std::vector<JobView> jobs;
  // Stalled jobs first (training_stalled: critical, then warning), then the
  // others, critical first, then warning, info.
  std::vector<DiagnosisView> diagnoses;
  // Nodes named by node-level diagnoses (e.g. a saturated uplink).
  std::vector<std::pair<std::string, PodMark>> node_marks;
};

ReportModel ModelOf(const nlohmann::json& report);

// "a:" before what an item of a report of several clusters names (its
// "cluster", `trainscope report --prometheus` behind Thanos); "" otherwise.
std::string ClusterPrefix(const nlohmann::json& item);

// "critical", "warning" or "info" (anything else): for CSS classes and
// colours, so a severity string never reaches markup unchecked.
std::string SeverityClass(const std::string& severity);

// A rank's processes per state ({"running":1,"sleeping":2,...}) in /proc's
// state letters: "1R 2S"; "" when none (or not numbers).
std::string ProcessCounts(const nlohmann::json& processes);

// A short tag for a diagnosis kind, drawn on the pod ("HOT", "SLOW", ...).
std::string KindTag(const std::string& kind);

}  // namespace trainscope::page
