// allreduce_straggler: in an allreduce job every step ends with a collective
// that waits for the slowest rank, so one slow rank slows every rank alike
// and byte rates cannot single it out. It is found by the cause it shows
// (throttling, CPU starvation, IO or memory stalls) compared with its peers.
// A rank held back by its saturated link is allreduce_slow_link instead.
#include <fmt/format.h>

#include <algorithm>

#include "diagnosis/detectors.h"
#include "diagnosis/exchange_quiet.h"
#include "diagnosis/ranks.h"

namespace trainscope::diagnosis {
namespace {

bool LinkSaturated(const PodStats& pod, const AllreduceLinkSettings& s) {
  for (bool receive : {true, false}) {
    auto use = LinkUtilization(pod, receive);
    if (use && use->ratio >= s.exit_ratio) return true;
  }
  return false;
}

// The first action for the cause, in the words of the rank's framework.
std::string CauseAdvice(const StandOut& cause, const std::string& pod,
                        Framework framework) {
  const bool torch = framework == Framework::kPyTorch;
  if (cause.cause == "cpu_throttled" || cause.metric == "cpu_limit_use_ratio") {
    return fmt::format(
        "Raise the CPU limit of {} (resources.limits.cpu) to its peers' or "
        "drop the limit and keep the request; {}",
        pod,
        torch ? "size the rank's threads to it (torch.set_num_threads, "
                "OMP_NUM_THREADS, DataLoader num_workers) so bursts do not "
                "exhaust the CFS quota."
              : "size the rank's thread pools to it (OMP_NUM_THREADS, "
                "intra/inter-op threads) so bursts do not exhaust the CFS "
                "quota.");
  }
  if (cause.cause == "cpu_starved") {
    return fmt::format(
        "{} waits for CPU its peers get: move it off its busy node (other "
        "tenants, noisy neighbours) or give it a guaranteed CPU request "
        "(requests = limits, static CPU manager policy).",
        pod);
  }
  if (cause.cause == "io_stall") {
    return fmt::format(
        "{} stalls on IO: stage its input shard on local disk or cache it; "
        "{}",
        pod,
        torch ? "use DataLoader(num_workers>0, pin_memory=True, "
                "prefetch_factor) so reads overlap the step."
              : "prefetch input so reads overlap the step (tf.data "
                ".prefetch(tf.data.AUTOTUNE), DALI).");
  }
  return fmt::format(
      "{} stalls on memory: raise its memory limit "
      "(resources.limits.memory) or shrink its per-rank buffers ({}).",
      pod,
      torch ? "batch size, DataLoader prefetch_factor, DDP bucket_cap_mb"
            : "batch size, input prefetch buffers, fusion buffer "
              "(HOROVOD_FUSION_THRESHOLD)");
}

std::vector<std::string> JobAdvice(const std::string& pod, JobKind kind,
                                   Framework framework) {
  std::vector<std::string> out;
  if (framework == Framework::kPyTorch || kind == JobKind::kPyTorchJob) {
    out.push_back(fmt::format(
        "Until {} is fixed every DDP step waits for it: with torchrun "
        "elastic (PyTorchJob elasticPolicy, --nnodes=MIN:MAX) delete the pod "
        "so it restarts on another node; check its NCCL_SOCKET_IFNAME / "
        "NCCL_IB_DISABLE (or gloo GLOO_SOCKET_IFNAME) match its peers'.",
        pod));
  } else if (kind == JobKind::kMPIJob) {
    out.push_back(fmt::format(
        "Until {} is fixed every allreduce waits for it: delete the worker "
        "pod so it lands on another node (Horovod elastic: horovodrun "
        "--min-np/--max-np keeps training), and compare its NCCL_* / "
        "HOROVOD_* environment with its peers'.",
        pod));
  } else {
    out.push_back(fmt::format(
        "Until {} is fixed every collective waits for it: reschedule it "
        "(delete the pod) onto a node like its peers' and compare its "
        "NCCL_* / collective settings with theirs.",
        pod));
  }
  out.push_back(
      "Adding ranks does not help while one rank is slow: the slowest rank "
      "sets the step time of all.");
  return out;
}

// A rank that stopped exchanging in the window (now, or before steps
// resumed) is training_stalled's: a spinning or blocked rank stands out in
// CPU or IO only because the ring stopped.
bool StoppedInRecent(const DetectorInput& in, const PodStats& rank,
                     const DiagnosisSettings& all) {
  const auto& pods = in.baseline.get().pods;
  auto it = pods.find(PodKey(rank.meta.namespace_name, rank.meta.pod));
  if (it == pods.end()) return false;
  const double interval =
      rank.span_seconds /
      static_cast<double>(std::max<size_t>(all.window_samples, 2) - 1);
  return StoppedRecently(
      it->second, StopLine(it->second, interval, all.stall),
      std::max(rank.span_seconds, all.stall.resume_settle_s));
}

}  // namespace

void DetectAllreduceStraggler(const DetectorInput& in,
                              const DiagnosisSettings& all,
                              std::vector<Finding>& out) {
  for (const auto& job : AllreduceJobs(in.recent)) {
    if (job.ranks.size() < 2) continue;
    // One rank stopped stops the ring: the others wait on it, and their
    // figures while they wait (or catch up unevenly after) compare nothing.
    if (std::any_of(job.ranks.begin(), job.ranks.end(), [&](const PodStats* r) {
          return StoppedInRecent(in, *r, all);
        }))
      continue;
    for (const PodStats* rank : job.ranks) {
      if (LinkSaturated(*rank, all.allreduce_link)) continue;
      std::vector<const PodStats*> peers;
      for (const PodStats* p : job.ranks) {
        if (p != rank) peers.push_back(p);
      }
      auto causes = CausesStandingOut(*rank, peers, all);
      if (causes.empty()) continue;
      const StandOut& top = causes.front();
      Finding f;
      f.level = top.level;
      f.diagnosis =
          NewDiagnosis(kAllreduceStraggler, Severity::kWarning, rank->meta);
      auto& ev = f.diagnosis.evidence;
      ev = {{"cause", top.cause},
            {"ranks", job.ranks.size()},
            {"causes", CauseEvidence(causes)}};
      if (job.job_kind != JobKind::kUnknown) {
        ev["job_kind"] = std::string(JobKindName(job.job_kind));
      }
      if (!job.exchange.empty()) {
        std::vector<double> rates;
        for (const auto& [_, r] : job.exchange) rates.push_back(r);
        ev["job_rank_exchange_bytes_per_second"] = Round4(Median(rates));
      }
      SetCauseImpact(f.diagnosis, causes);
      f.diagnosis.summary = fmt::format(
          "Rank {} of allreduce job {} holds every step back: {} {:.2f} "
          "against its {} peers' median {:.2f} ({}).",
          rank->meta.pod, job.training_job, top.metric, top.value, top.peers,
          top.peer_median, top.cause);
      f.diagnosis.recommendations.push_back(
          CauseAdvice(top, rank->meta.pod, job.framework));
      for (auto& r : JobAdvice(rank->meta.pod, job.job_kind, job.framework)) {
        f.diagnosis.recommendations.push_back(std::move(r));
      }
      out.push_back(std::move(f));
    }
  }
}

}  // namespace trainscope::diagnosis
