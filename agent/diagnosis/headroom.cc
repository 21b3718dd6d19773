#include "diagnosis/headroom.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "diagnosis/detectors.h"

namespace trainscope::diagnosis {
namespace {

// A resource the job uses less than this share of tells nothing about where
// it saturates (its load factor would be a ratio of noise).
constexpr double kLeastJobShareOfCapacity = 0.01;

// Workers exchanging with this PS now, from its own counters.
size_t WorkersServed(const WindowStats& stats, const PodStats& ps) {
  size_t n = 0;
  for (const auto& [peer, rate] : ps.peer_rates) {
    if (RunsTrainingSteps(PeerRole(stats, peer)) &&
        rate.receive_bytes + rate.transmit_bytes > 0)
      ++n;
  }
  return n;
}

// Fills load_factor; false when the job's part is too small to forecast.
bool Finish(ResourceLoad& r) {
  if (r.capacity <= 0 || r.job_used < kLeastJobShareOfCapacity * r.capacity)
    return false;
  const double others = std::max(0.0, r.used - r.job_used);
  r.load_factor = std::max(1.0, (r.capacity - others) / r.job_used);
  return true;
}

// A shaped PS link, each direction: all of it is the job's traffic. An
// unshaped one is its node's NIC, shared with other pods: the node uplink
// entry accounts for it.
void AddPsLinks(const PodStats& ps, size_t workers,
                std::vector<ResourceLoad>& out) {
  for (bool receive : {true, false}) {
    auto use = LinkUtilization(ps, receive);
    if (!use || !use->shaped) continue;
    ResourceLoad r{kPsLink,
                   ps.meta.pod,
                   ps.meta.node,
                   receive ? "receive" : "transmit",
                   use->bytes_per_second,
                   use->capacity_bytes_per_second,
                   use->bytes_per_second};
    r.workers = workers;
    if (Finish(r)) out.push_back(r);
  }
}

// The PS's CPU against its limit, else against its node's cores.
void AddPsCpu(const PodStats& ps, size_t workers,
              std::vector<ResourceLoad>& out) {
  if (!ps.cpu_cores) return;
  const std::optional<double> capacity =
      ps.cpu_limit_cores ? ps.cpu_limit_cores : ps.node_cpu_count;
  if (!capacity) return;
  ResourceLoad r{kPsCpu,        ps.meta.pod, ps.meta.node, "",
                 *ps.cpu_cores, *capacity,   *ps.cpu_cores};
  r.workers = workers;
  if (Finish(r)) out.push_back(r);
}

// The uplink of a node holding some of the job's PS: what the job's pods
// there put on it grows with the job, the rest (other tenants) stays.
void AddNodeUplink(const WindowStats& stats, const JobTraffic& job,
                   const std::string& node, size_t workers,
                   std::vector<ResourceLoad>& out) {
  auto it = stats.nodes.find(node);
  if (it == stats.nodes.end() || !it->second.nic_speed_bytes_per_second) return;
  const NodeStats& link = it->second;
  for (bool receive : {true, false}) {
    const auto& rate = receive ? link.receive_bytes_per_second
                               : link.transmit_bytes_per_second;
    if (!rate) continue;
    double job_part = 0;
    for (const auto& [key, pod] : stats.pods) {
      if (pod.meta.node != node ||
          pod.meta.namespace_name != job.namespace_name ||
          pod.meta.training_job != job.training_job)
        continue;
      job_part += OnLinkRate(stats, pod, receive, *rate);
    }
    ResourceLoad r{kNodeUplink,
                   "",
                   node,
                   receive ? "receive" : "transmit",
                   *rate,
                   *link.nic_speed_bytes_per_second,
                   std::min(job_part, *rate)};
    r.workers = workers;
    if (Finish(r)) out.push_back(r);
  }
}

std::optional<double> MeanWorkerSteps(const std::vector<JobSpeed>& speeds,
                                      const JobTraffic& job) {
  for (const auto& s : speeds) {
    if (s.namespace_name != job.namespace_name ||
        s.training_job != job.training_job || s.worker_steps_per_second.empty())
      continue;
    return s.steps_per_second /
           static_cast<double>(s.worker_steps_per_second.size());
  }
  return std::nullopt;
}

std::optional<JobHeadroom> JobHeadroomOf(const WindowStats& stats,
                                         const JobTraffic& job,
                                         const std::vector<JobSpeed>& speeds) {
  JobHeadroom h{job.namespace_name, job.training_job};
  std::set<std::string> ps_nodes;
  size_t workers = 0;
  for (const auto& name : job.ps) {
    auto it = stats.pods.find(PodKey(job.namespace_name, name));
    if (it == stats.pods.end()) continue;  // another node's view has it
    const PodStats& ps = it->second;
    const size_t served = WorkersServed(stats, ps);
    workers = std::max(workers, served);
    AddPsLinks(ps, served, h.resources);
    AddPsCpu(ps, served, h.resources);
    if (!ps.meta.node.empty()) ps_nodes.insert(ps.meta.node);
  }
  for (const auto& node : ps_nodes)
    AddNodeUplink(stats, job, node, workers, h.resources);
  if (h.resources.empty() || workers == 0) return std::nullopt;
  std::stable_sort(h.resources.begin(), h.resources.end(),
                   [](const ResourceLoad& a, const ResourceLoad& b) {
                     return a.load_factor < b.load_factor;
                   });
  h.workers = workers;
  h.max_workers = static_cast<double>(workers) * h.bottleneck().load_factor;
  if (auto per_worker = MeanWorkerSteps(speeds, job)) {
    h.steps_per_second = *per_worker * static_cast<double>(workers);
    h.max_steps_per_second = *h.steps_per_second * h.bottleneck().load_factor;
  }
  return h;
}

std::string Mbit(double bytes_per_second) {
  return fmt::format("{:.0f} Mbit/s", bytes_per_second * 8 / 1e6);
}

}  // namespace

std::vector<JobHeadroom> ComputeHeadroom(const WindowStats& stats,
                                         const std::vector<JobTraffic>& jobs,
                                         const std::vector<JobSpeed>& speeds) {
  std::vector<JobHeadroom> out;
  for (const auto& job : jobs) {
    if (auto h = JobHeadroomOf(stats, job, speeds)) out.push_back(*h);
  }
  return out;
}

const JobHeadroom* HeadroomOf(const std::vector<JobHeadroom>& all,
                              const std::string& namespace_name,
                              const std::string& training_job) {
  for (const auto& h : all) {
    if (h.namespace_name == namespace_name && h.training_job == training_job)
      return &h;
  }
  return nullptr;
}

nlohmann::json ResourceJson(const ResourceLoad& r) {
  nlohmann::json j = {{"resource", r.resource}};
  if (!r.pod.empty()) j["pod"] = r.pod;
  if (!r.node.empty()) j["node"] = r.node;
  if (!r.direction.empty()) j["direction"] = r.direction;
  j["utilization_ratio"] = Round4(r.capacity > 0 ? r.used / r.capacity : 0);
  j["capacity"] = Round4(r.capacity);
  j["load_factor"] = Round4(r.load_factor);
  j["workers"] = r.workers;
  return j;
}

nlohmann::json HeadroomJson(const JobHeadroom& h) {
  nlohmann::json j = {{"workers", h.workers},
                      {"max_workers", Round4(h.max_workers)}};
  if (h.steps_per_second) j["steps_per_second"] = Round4(*h.steps_per_second);
  if (h.max_steps_per_second)
    j["max_steps_per_second"] = Round4(*h.max_steps_per_second);
  j["bottleneck"] = ResourceJson(h.bottleneck());
  nlohmann::json all = nlohmann::json::array();
  for (const auto& r : h.resources) all.push_back(ResourceJson(r));
  j["resources"] = std::move(all);
  return j;
}

void NoteHeadroom(const std::vector<JobHeadroom>* all,
                  const HeadroomSettings& s, Diagnosis& d) {
  if (!all) return;
  const JobHeadroom* h = HeadroomOf(*all, d.namespace_name, d.training_job);
  if (!h) return;
  d.evidence["headroom"] = HeadroomJson(*h);
  const ResourceLoad& top = h->bottleneck();
  if (top.pod != d.pod || top.load_factor >= s.warn_below_load_factor) return;
  std::string at = fmt::format("{:.0f} workers", h->max_workers);
  if (h->max_steps_per_second) {
    at += fmt::format(" ({:.3g} steps/s)", *h->max_steps_per_second);
  }
  d.summary += fmt::format(
      " Adding workers beyond {} will not help: {} is {:.0f}% full and "
      "saturates at about {}.",
      static_cast<int>(h->max_workers), DescribeResource(top),
      100 / top.load_factor, at);
  if (d.severity < Severity::kWarning) {
    d.severity = Severity::kWarning;
    d.evidence["severity_from"] = "headroom";
  }
}

std::string DescribeResource(const ResourceLoad& r) {
  if (r.resource == kPsCpu)
    return fmt::format("{}'s CPU ({:g} cores)", r.pod, Round4(r.capacity));
  if (r.resource == kPsLink)
    return fmt::format("{}'s {} link ({})", r.pod, r.direction,
                       Mbit(r.capacity));
  return fmt::format("{}'s uplink ({}, {})", r.node, r.direction,
                     Mbit(r.capacity));
}

}  // namespace trainscope::diagnosis
