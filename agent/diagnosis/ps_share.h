#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/window.h"

namespace trainscope::diagnosis {

inline constexpr char kFromWorkers[] = "workers";
inline constexpr char kFromPs[] = "ps";
inline constexpr char kFromSomePs[] = "some_ps";

struct PsTraffic {
  std::string key;  // "namespace/pod"
  std::string pod;
  double bytes_per_second = 0;  // both directions
  double share = 0;             // of the job's PS traffic, 0..1
};

// The PS traffic picture of one training job over a window.
struct JobTraffic {
  std::string namespace_name;
  std::string training_job;
  std::vector<std::string> ps;       // pod names known as the job's PS
  std::vector<std::string> workers;  // workers, chief, master
  // Sorted by pod name; every PS with traffic seen, local or remote.
  std::vector<PsTraffic> ps_traffic;
  double total_bytes_per_second = 0;
  // Each observed worker's exchange with all of the job's PS (bytes/s).
  std::map<std::string, double> worker_exchange;  // by "namespace/pod"
  // Every worker (on any node) by its exchange with the job's PS on this
  // node, from the PS' own counters: a node that runs a PS but few workers
  // still compares all the workers that PS serves, on equal terms.
  std::map<std::string, double> ps_side_worker_exchange;
  // The same exchange per PS: worker key -> PS key -> bytes/s (the edges
  // of the report page).
  std::map<std::string, std::map<std::string, double>> worker_ps_links;
  // Whose counters the shares come from: kFromWorkers, kFromPs, or
  // kFromSomePs (no shares: this view holds only some of the job's PS and
  // none of its workers, too little to judge the balance); empty when the
  // job has no PS traffic here.
  std::string perspective;
};

// PS traffic per job. The workers' side is preferred: every worker talks to
// every PS holding a variable, so a node with one worker already sees the
// skew, and a local PS is not favoured over remote ones. Remote PS (peers
// with role ps that the pod list does not hold) belong to the job of the
// workers that talk to them. When no worker of a job is observed, the PS'
// own counters with non-PS peers are used.
std::vector<JobTraffic> ComputeJobTraffic(const WindowStats& stats);

// Max over mean of the job's per-PS traffic (1 when balanced, n when one PS
// of n carries everything); empty when the job has no PS traffic at all (a
// skew of nothing is undefined, not 1).
std::optional<double> PsTrafficSkew(const JobTraffic& job);

}  // namespace trainscope::diagnosis

namespace trainscope::diagnosis {

// A worker's exchange with the PS it talks to (bytes/s, both directions);
// empty when the window has no peer traffic for it.
std::optional<double> WorkerPsExchange(const WindowStats& stats,
                                       const std::string& key);

}  // namespace trainscope::diagnosis
