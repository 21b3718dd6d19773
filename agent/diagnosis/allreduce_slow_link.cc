// allreduce_slow_link: a ring allreduce moves the same bytes over every
// rank's link each step, so the slowest link sets the step time of the whole
// job. One rank's link at capacity while its peers' links are not is that
// link; every rank's link at capacity is a network_saturated job instead.
#include <fmt/format.h>

#include <algorithm>

#include "diagnosis/detectors.h"
#include "diagnosis/impact.h"
#include "diagnosis/ranks.h"

namespace trainscope::diagnosis {
namespace {

struct Worst {
  LinkUse use;
  bool receive = false;
};

// The fuller direction of a pod's link; empty when no capacity is known.
std::optional<Worst> WorstLink(const PodStats& pod) {
  std::optional<Worst> worst;
  for (bool receive : {true, false}) {
    auto use = LinkUtilization(pod, receive);
    if (use && (!worst || use->ratio > worst->use.ratio)) {
      worst = Worst{*use, receive};
    }
  }
  return worst;
}

// The median exchange among ranks, or empty without flow data.
std::optional<double> MedianExchange(const std::vector<RankJob>& jobs,
                                     const RankJob& job) {
  for (const auto& j : jobs) {
    if (j.namespace_name != job.namespace_name ||
        j.training_job != job.training_job || j.exchange.empty()) {
      continue;
    }
    std::vector<double> rates;
    for (const auto& [_, r] : j.exchange) rates.push_back(r);
    return Median(rates);
  }
  return std::nullopt;
}

std::vector<std::string> Advice(const std::string& pod, const Worst& w,
                                JobKind kind, Framework framework) {
  std::vector<std::string> out;
  if (w.use.shaped) {
    out.push_back(fmt::format(
        "Raise or remove the kubernetes.io/{}-bandwidth annotation of {}: "
        "the whole ring runs at its shaped rate.",
        w.receive ? "ingress" : "egress", pod));
  } else {
    out.push_back(fmt::format(
        "Move {} to a node whose NIC is not shared or slower than its "
        "peers' (pod anti-affinity between ranks, same NIC speed on every "
        "rank's node): the whole ring runs at its link's rate.",
        pod));
  }
  if (framework == Framework::kPyTorch || kind == JobKind::kPyTorchJob) {
    out.push_back(
        "Cut or hide the gradient bytes: DDP gradient compression hooks "
        "(register_comm_hook with fp16_compress_hook / PowerSGD), larger "
        "bucket_cap_mb so communication overlaps backward, gradient "
        "accumulation (no_sync) to allreduce less often; check NCCL uses the "
        "fast interface (NCCL_SOCKET_IFNAME, NCCL_IB_DISABLE=0 on "
        "InfiniBand/RoCE).");
  } else if (kind == JobKind::kMPIJob) {
    out.push_back(
        "Cut the gradient bytes: Horovod fp16 compression "
        "(hvd.DistributedOptimizer(compression=hvd.Compression.fp16)), a "
        "larger HOROVOD_FUSION_THRESHOLD, backward_passes_per_step > 1; check "
        "NCCL_SOCKET_IFNAME picks the fast NIC.");
  } else {
    out.push_back(
        "Cut the gradient bytes per step: fp16 gradient compression, larger "
        "batches or gradient accumulation, and make sure the collective uses "
        "the fastest interface (NCCL_SOCKET_IFNAME).");
  }
  return out;
}

// With the peers' links as fast as theirs, the time the rank exchanges
// shrinks by capacity / peer capacity (or, where the peers' capacities are
// unknown, by its exchange pace against theirs: seconds per byte); with no
// overlap of compute and communication that is the share of the step the
// whole ring saves. The time the rank exchanges is measured (its exchange
// bursts); without it, the link's utilization stands in (an upper bound).
void SetSlowLinkImpact(const DetectorInput& in, const RankJob& job,
                       const PodStats& rank, const Worst& worst,
                       const std::vector<double>& peer_capacity, Diagnosis& d) {
  const auto busy = PodExchangeShare(
      in.recent, PodKey(rank.meta.namespace_name, rank.meta.pod));
  if (busy) d.evidence["exchange_share"] = Round4(*busy);
  const double share = busy.value_or(std::min(1.0, worst.use.ratio));
  std::string gap_model = "capacity_gap";
  double faster = 0;  // fraction of the exchange time a peer-fast link saves
  if (!peer_capacity.empty()) {
    const double peer = Median(peer_capacity);
    if (peer > worst.use.capacity_bytes_per_second)
      faster = 1 - worst.use.capacity_bytes_per_second / peer;
  } else if (const auto here = PodExchangePace(rank)) {
    std::vector<double> others;
    for (const PodStats* p : job.ranks)
      if (p != &rank)
        if (auto pace = PodExchangePace(*p)) others.push_back(*pace);
    if (!others.empty()) {
      gap_model = "pace_gap";
      faster = std::max(0.0, 1 - Median(others) / *here);
    }
  }
  SetImpact(d, share * faster,
            busy ? "exchange_share_x_" + gap_model
                 : "link_utilization_x_" + gap_model +
                       std::string(kUpperBoundSuffix));
}

}  // namespace

void DetectAllreduceSlowLink(const DetectorInput& in,
                             const AllreduceLinkSettings& s,
                             std::vector<Finding>& out) {
  const auto jobs = AllreduceJobs(in.recent);
  std::optional<std::vector<RankJob>> baseline_jobs;  // read when needed
  for (const auto& job : jobs) {
    if (job.ranks.size() < 2) continue;
    for (const PodStats* rank : job.ranks) {
      auto worst = WorstLink(*rank);
      if (!worst || worst->use.ratio < s.exit_ratio) continue;
      // Peers: saturated ones, and the capacities they are known to have.
      size_t saturated = 0;
      std::vector<double> peer_capacity;
      nlohmann::json peers = nlohmann::json::object();
      for (const PodStats* p : job.ranks) {
        if (p == rank) continue;
        auto pw = WorstLink(*p);
        if (pw && pw->use.ratio >= s.enter_ratio) ++saturated;
        if (pw) peer_capacity.push_back(pw->use.capacity_bytes_per_second);
        peers[p->meta.pod] =
            pw ? nlohmann::json(Round4(pw->use.ratio)) : nlohmann::json();
      }
      const size_t n_peers = job.ranks.size() - 1;
      // Half the ring or more at capacity: the job is bandwidth bound
      // everywhere (network_saturated), not held back by one link.
      if (2 * saturated >= n_peers) continue;
      Finding f;
      f.level = worst->use.ratio >= s.enter_ratio ? Finding::Level::kEnter
                                                  : Finding::Level::kHold;
      f.diagnosis =
          NewDiagnosis(kAllreduceSlowLink, Severity::kWarning, rank->meta);
      const char* direction = worst->receive ? "receive" : "transmit";
      auto& ev = f.diagnosis.evidence;
      ev = {{"direction", direction},
            {"bytes_per_second", Round4(worst->use.bytes_per_second)},
            {"capacity_bytes_per_second",
             Round4(worst->use.capacity_bytes_per_second)},
            {"utilization_ratio", Round4(worst->use.ratio)},
            {"capacity_source",
             worst->use.shaped ? "bandwidth_annotation" : "node_nic"},
            {"ranks", job.ranks.size()},
            {"peer_utilization_ratio", std::move(peers)}};
      const auto now = MedianExchange(jobs, job);
      if (!baseline_jobs) baseline_jobs = AllreduceJobs(in.baseline.get());
      const auto before = MedianExchange(*baseline_jobs, job);
      if (now) ev["job_rank_exchange_bytes_per_second"] = Round4(*now);
      if (now && before && *before > 0) {
        ev["job_exchange_ratio_to_baseline"] = Round4(*now / *before);
      }
      SetSlowLinkImpact(in, job, *rank, *worst, peer_capacity, f.diagnosis);
      f.diagnosis.summary = fmt::format(
          "Rank {} of allreduce job {} {}s {:.1f} Mbit/s, {:.0f}% of its "
          "{:.0f} Mbit/s {}, while {} of its {} peers' links are below "
          "capacity: the whole ring runs at this link's rate.",
          rank->meta.pod, job.training_job, direction,
          worst->use.bytes_per_second * 8 / 1e6, worst->use.ratio * 100,
          worst->use.capacity_bytes_per_second * 8 / 1e6,
          worst->use.shaped ? "bandwidth limit" : "node link",
          n_peers - saturated, n_peers);
      f.diagnosis.recommendations =
          Advice(rank->meta.pod, *worst, job.job_kind, job.framework);
      out.push_back(std::move(f));
    }
  }
}

}  // namespace trainscope::diagnosis
