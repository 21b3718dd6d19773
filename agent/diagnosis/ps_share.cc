#include "diagnosis/ps_share.h"

#include <algorithm>
#include <set>
#include <utility>

namespace trainscope::diagnosis {
namespace {

bool IsWorkerRole(Role r) {
  return r == Role::kWorker || r == Role::kChief || r == Role::kMaster;
}

std::string NameOf(const std::string& key) {
  auto slash = key.find('/');
  return slash == std::string::npos ? key : key.substr(slash + 1);
}

// A chief is left out of the PS balance where the view holds another worker
// of its job (only RunsTrainingSteps ranks' exchange is the job's per-step
// traffic): a TF2 coordinator exchanges with the PS only to create, restore
// or checkpoint variables, one PS after another (a real TF2 job on 20 Mbit/s
// PS links read 77%, then 100%, then 96% for a different PS each time while
// the chief wrote the initial values), and a TF1 chief is one worker among
// the others, whose shares it only repeats. A job of a chief alone is judged
// by the chief.

using JobId = std::pair<std::string, std::string>;  // namespace, job
// Bytes/s per PS pod key, as the workers or the PS themselves see it.
using PsBytes = std::map<std::string, double>;

// A worker's exchange with its job's PS (a PS of another job, known
// locally, is not this job's).
void AddWorkerExchange(const WindowStats& stats, const std::string& key,
                       const PodStats& pod, JobTraffic& job,
                       PsBytes& from_workers, PsBytes& from_chief) {
  const auto& m = pod.meta;
  double exchange = 0;
  bool any = false;
  for (const auto& [peer, rate] : pod.peer_rates) {
    if (PeerRole(stats, peer) != Role::kPs ||
        OfAnotherJob(stats, peer, m.training_job))
      continue;
    double bytes = rate.receive_bytes + rate.transmit_bytes;
    (RunsTrainingSteps(m.role) ? from_workers : from_chief)[peer] += bytes;
    job.worker_ps_links[key][peer] += bytes;
    exchange += bytes;
    any = true;
  }
  // Only workers seen talking to a PS (even at 0 bytes/s now) count: one
  // whose flows show no PS at all tells nothing about its exchange.
  if (any) job.worker_exchange[key] = exchange;
}

// A PS's traffic with everyone but other PS and the chief (see above), as
// the PS sees it.
void AddPsExchange(const WindowStats& stats, const std::string& key,
                   const PodStats& pod, JobTraffic& job, PsBytes& from_ps) {
  double own = 0;
  for (const auto& [peer, rate] : pod.peer_rates) {
    const Role peer_role = PeerRole(stats, peer);
    if (peer_role == Role::kPs || peer_role == Role::kChief) continue;
    own += rate.receive_bytes + rate.transmit_bytes;
    if (peer_role == Role::kWorker || peer_role == Role::kMaster) {
      job.ps_side_worker_exchange[peer] +=
          rate.receive_bytes + rate.transmit_bytes;
    }
  }
  if (!pod.peer_rates.empty()) from_ps[key] = own;
}

// PS of the job on other nodes, from the pod lists: the job's PS count is
// the roster's, not only the PS this node happened to see.
void AddRosterPs(const WindowStats& stats, const JobId& id, JobTraffic& job) {
  const auto it = stats.job_ps.find(PodKey(id.first, id.second));
  if (it == stats.job_ps.end()) return;
  std::set<std::string> known(job.ps.begin(), job.ps.end());
  for (const auto& ps : it->second) {
    if (known.insert(ps).second) job.ps.push_back(ps);
  }
}

// Each PS's share of the job's traffic; local PS the workers never reached
// still count, with share 0.
void ComputeShares(const JobId& id, const PsBytes& source, JobTraffic& job) {
  for (const auto& [key, bytes] : source) job.total_bytes_per_second += bytes;
  for (const auto& [key, bytes] : source) {
    PsTraffic t{key, NameOf(key), bytes, 0};
    if (job.total_bytes_per_second > 0) {
      t.share = bytes / job.total_bytes_per_second;
    }
    job.ps_traffic.push_back(std::move(t));
  }
  std::set<std::string> seen;
  for (const auto& t : job.ps_traffic) seen.insert(t.pod);
  for (const auto& ps : job.ps) {
    if (!seen.count(ps)) {
      job.ps_traffic.push_back({PodKey(id.first, ps), ps, 0, 0});
    }
  }
  std::sort(
      job.ps_traffic.begin(), job.ps_traffic.end(),
      [](const PsTraffic& a, const PsTraffic& b) { return a.pod < b.pod; });
}

// Every PS the job's roster names is a pod of this view (its own counters
// are here, idle or not).
bool HoldsEveryPs(const WindowStats& stats, const JobTraffic& job) {
  for (const auto& ps : job.ps) {
    if (!stats.pods.count(PodKey(job.namespace_name, ps))) return false;
  }
  return !job.ps.empty();
}

}  // namespace

std::vector<JobTraffic> ComputeJobTraffic(const WindowStats& stats) {
  std::map<JobId, JobTraffic> jobs;
  std::map<JobId, PsBytes> from_workers, from_chief, from_ps;
  std::set<JobId> with_workers;  // jobs with a worker (not chief) here
  for (const auto& [key, pod] : stats.pods) {
    const auto& m = pod.meta;
    if (m.training_job.empty()) continue;
    JobId id{m.namespace_name, m.training_job};
    JobTraffic& job = jobs[id];
    job.namespace_name = m.namespace_name;
    job.training_job = m.training_job;
    if (m.role == Role::kPs) {
      job.ps.push_back(m.pod);
      AddPsExchange(stats, key, pod, job, from_ps[id]);
    }
    if (IsWorkerRole(m.role)) {
      job.workers.push_back(m.pod);
      AddWorkerExchange(stats, key, pod, job, from_workers[id], from_chief[id]);
      if (RunsTrainingSteps(m.role)) with_workers.insert(id);
    }
  }
  std::vector<JobTraffic> out;
  for (auto& [id, job] : jobs) {
    AddRosterPs(stats, id, job);
    // The workers' view when any worker reached a PS (each worker talks to
    // every PS holding a variable, so one worker sees the whole job), else
    // the PS's own, but only when this view holds every PS of the job: a
    // node with some of the PS sees only their part of the traffic, and
    // each of its PS would read as the hot one.
    if (!with_workers.count(id)) from_workers[id] = from_chief[id];
    if (auto it = from_workers.find(id);
        it != from_workers.end() && !it->second.empty()) {
      job.perspective = kFromWorkers;
      ComputeShares(id, it->second, job);
    } else if (auto it2 = from_ps.find(id);
               it2 != from_ps.end() && !it2->second.empty()) {
      if (HoldsEveryPs(stats, job)) {
        job.perspective = kFromPs;
        ComputeShares(id, it2->second, job);
      } else {
        job.perspective = kFromSomePs;
      }
    }
    std::sort(job.ps.begin(), job.ps.end());
    std::sort(job.workers.begin(), job.workers.end());
    out.push_back(std::move(job));
  }
  return out;
}

std::optional<double> PsTrafficSkew(const JobTraffic& job) {
  if (job.ps_traffic.empty() || job.total_bytes_per_second <= 0) {
    return std::nullopt;
  }
  double max = 0;
  for (const auto& t : job.ps_traffic) max = std::max(max, t.bytes_per_second);
  const double mean =
      job.total_bytes_per_second / static_cast<double>(job.ps_traffic.size());
  return max / mean;
}

}  // namespace trainscope::diagnosis

namespace trainscope::diagnosis {

std::optional<double> WorkerPsExchange(const WindowStats& stats,
                                       const std::string& key) {
  auto it = stats.pods.find(key);
  if (it == stats.pods.end() || it->second.peer_rates.empty()) {
    return std::nullopt;
  }
  double sum = 0;
  for (const auto& [peer, rate] : it->second.peer_rates) {
    if (PeerRole(stats, peer) == Role::kPs) {
      sum += rate.receive_bytes + rate.transmit_bytes;
    }
  }
  return sum;
}

}  // namespace trainscope::diagnosis
