#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "diagnosis/headroom.h"
#include "diagnosis/ps_share.h"
#include "diagnosis/training_speed.h"
#include "trainscope/pod.h"
#include "trainscope/snapshot.h"
#include "trainscope/time_format.h"

namespace trainscope {

// GET /api/v1/pods: the discovered pods with identity, IPs and the cgroups
// the latest sample found for them (null when not found yet).
nlohmann::json PodsView(const PodList& pods, const Snapshot* latest);

// GET /api/v1/report as DESIGN.md specifies it. Diagnoses come from the
// diagnosis engine; until it runs, the list is empty but the jobs summary
// (which pods are PS and workers) is already useful.
nlohmann::json ReportView(const std::string& node, const PodList& pods,
                          const nlohmann::json& diagnoses,
                          std::chrono::system_clock::time_point now);

// One job's PS traffic share (pod name -> 0..1) as the diagnosis computed it,
// with the rates behind it (bytes/s, both directions).
struct JobPsShares {
  std::string namespace_name;
  std::string training_job;
  std::map<std::string, double> share;
  std::map<std::string, double> ps_bytes_per_second;      // by PS pod
  std::map<std::string, double> worker_bytes_per_second;  // with all PS
  // (worker pod, PS pod) -> bytes/s: the edges of the report page.
  std::map<std::pair<std::string, std::string>, double> links;
  std::string measured_from;  // "workers" | "ps" | ""
};

// The report's view of the diagnosis' PS traffic (the same numbers as
// trainscope_ps_traffic_share_ratio).
std::vector<JobPsShares> PsSharesOf(
    const std::vector<diagnosis::JobTraffic>& jobs);

// Fills jobs[].ps_traffic_share of a ReportView, and the additions the
// report page draws (ps_bytes_per_second, worker_ps_bytes_per_second, links,
// measured_from); a job known only through its traffic (no pod of it in
// `pods`) is added.
void SetPsTrafficShares(nlohmann::json& report,
                        const std::vector<JobPsShares>& jobs);

// Fills the scaling view of each job: steps_per_second (the sum over its
// workers with a step rate), worker_steps_per_second {pod: rate},
// steps_per_second_per_worker and workers_without_step_rate. A job that
// the report does not list yet is added.
void SetJobSpeeds(nlohmann::json& report,
                  const std::vector<diagnosis::JobSpeed>& speeds);

// Fills jobs[].headroom, the scaling forecast of each PS job
// (diagnosis::HeadroomJson). A job that the report does not list yet is
// added.
void SetJobHeadroom(nlohmann::json& report,
                    const std::vector<diagnosis::JobHeadroom>& headroom);

// Fills jobs[].pod_nodes for pods of the report's jobs that are not local
// (remote PS) from pods known elsewhere (peer discovery); never overrides.
void AddPodNodes(nlohmann::json& report, const PodList& known);

// The report as a table a person reads in a terminal.
std::string ReportText(const nlohmann::json& report);

}  // namespace trainscope
