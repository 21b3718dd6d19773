#include "flows/ps_share.h"

#include <algorithm>
#include <set>
#include <tuple>

namespace trainscope {
namespace {

bool IsWorker(Role role) {
  return role == Role::kWorker || role == Role::kChief || role == Role::kMaster;
}

using Pair = std::pair<std::string, std::string>;  // (pod uid, peer uid)

std::map<Pair, double> PairBytes(const Snapshot& s) {
  std::map<Pair, double> out;
  for (const auto& p : s.peer_traffic) {
    if (p.peer_uid.empty()) continue;
    out[{p.pod_uid, p.peer_uid}] =
        static_cast<double>(p.receive_bytes + p.transmit_bytes);
  }
  return out;
}

}  // namespace

void FillShares(PsTrafficShare& job) {
  job.share.clear();
  job.skew.reset();
  job.total_bytes = 0;
  for (const auto& [pod, b] : job.bytes) job.total_bytes += b;
  if (job.total_bytes <= 0 || job.bytes.empty()) return;
  double max = 0;
  for (const auto& [pod, b] : job.bytes) {
    job.share[pod] = b / job.total_bytes;
    max = std::max(max, b);
  }
  const double mean = job.total_bytes / static_cast<double>(job.bytes.size());
  job.skew = max / mean;
}

std::vector<PsTrafficShare> ComputePsTrafficShares(
    const std::vector<std::shared_ptr<const Snapshot>>& window) {
  std::vector<PsTrafficShare> out;
  if (window.size() < 2 || !window.back() || !window.front()) return out;
  const Snapshot& last = *window.back();
  if (!last.pods) return out;

  std::map<std::string, const PodInfo*> by_uid;
  std::map<std::pair<std::string, std::string>, PsTrafficShare> jobs;
  for (const auto& pod : *last.pods) {
    by_uid[pod.uid] = &pod;
    if (pod.role != Role::kPs || pod.training_job.empty()) continue;
    auto& job = jobs[{pod.namespace_name, pod.training_job}];
    job.namespace_name = pod.namespace_name;
    job.training_job = pod.training_job;
    job.bytes[pod.name] = 0;
  }
  if (jobs.empty()) return out;

  const auto before = PairBytes(*window.front());
  const auto after = PairBytes(last);
  // Per unordered (worker, ps) pair: the larger of the two sides' views.
  std::map<Pair, double> pair_bytes;
  for (const auto& [pair, now] : after) {
    auto it = before.find(pair);
    double delta = now;
    if (it != before.end() && now >= it->second) delta = now - it->second;
    auto a = by_uid.find(pair.first), b = by_uid.find(pair.second);
    if (a == by_uid.end() || b == by_uid.end()) continue;
    const PodInfo* worker = a->second;
    const PodInfo* ps = b->second;
    if (worker->role == Role::kPs) std::swap(worker, ps);
    if (!IsWorker(worker->role) || ps->role != Role::kPs) continue;
    if (worker->namespace_name != ps->namespace_name ||
        worker->training_job != ps->training_job) {
      continue;
    }
    double& slot = pair_bytes[{worker->uid, ps->uid}];
    slot = std::max(slot, delta);
  }
  for (const auto& [pair, bytes] : pair_bytes) {
    const PodInfo* ps = by_uid[pair.second];
    jobs[{ps->namespace_name, ps->training_job}].bytes[ps->name] += bytes;
  }
  for (auto& [key, job] : jobs) {
    FillShares(job);
    out.push_back(std::move(job));
  }
  return out;
}

}  // namespace trainscope
