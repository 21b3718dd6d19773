// training_stalled: a job whose ranks stopped exchanging steps while their
// pods run: a rank stuck in compute, stopped, blocked on IO, cut off from a
// peer, gone, or every rank waiting on the others. Nothing about a stopped
// job is slow; it loses all its time, so the job comes first and the rank
// that differs from the others is the suspect. In an asynchronous PS job
// one worker can stop while the others go on: that worker alone.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diagnosis/detectors.h"
#include "diagnosis/exchange_quiet.h"
#include "diagnosis/stall_ranks.h"

namespace trainscope::diagnosis {
namespace {

struct StalledJob {
  std::vector<const PodStats*> members;   // fresh pods of the job
  std::vector<const PodStats*> steppers;  // ranks that showed a step
  bool has_ps = false;
};

// Pods whose newest point is this much older than the window's are gone
// (finished, deleted): never judged.
constexpr double kGoneAfterS = 10;

std::map<std::pair<std::string, std::string>, StalledJob> JobsOf(
    const WindowStats& stats) {
  double newest = 0;
  for (const auto& [_, pod] : stats.pods)
    newest = std::max(newest, pod.newest_t);
  std::map<std::pair<std::string, std::string>, StalledJob> jobs;
  for (const auto& [_, pod] : stats.pods) {
    const PodMeta& m = pod.meta;
    if (m.training_job.empty() || pod.newest_t < newest - kGoneAfterS) continue;
    StalledJob& job = jobs[{m.namespace_name, m.training_job}];
    job.members.push_back(&pod);
    if (m.role == Role::kPs) job.has_ps = true;
    if (RunsTrainingSteps(m.role) && pod.quiet && pod.quiet->anchored)
      job.steppers.push_back(&pod);
  }
  for (auto& [key, job] : jobs) {
    auto roster = stats.job_ps.find(PodKey(key.first, key.second));
    if (roster != stats.job_ps.end() && !roster->second.empty())
      job.has_ps = true;
  }
  return jobs;
}

// Quiet this long is a stall for this job: slow steps and the job's own
// earlier pauses raise the line.
double StallLine(const StalledJob& job, const StallSettings& s) {
  std::vector<double> rates;
  double longest_pause = 0;
  for (const PodStats* p : job.steppers) {
    if (p->steps_per_second && *p->steps_per_second > 0)
      rates.push_back(*p->steps_per_second);
    longest_pause = std::max(longest_pause, p->quiet->longest_earlier_quiet_s);
  }
  double line = std::max(s.min_stall_s, s.pause_multiple * longest_pause);
  if (!rates.empty()) line = std::max(line, s.step_multiple / Median(rates));
  return line;
}

// Every pod the job's pods exchanged with, and every PS of its roster, is
// in the window: a rank that differs cannot be outside the view.
bool WholeJobInView(const StalledJob& job, const WindowStats& stats,
                    const std::string& job_key) {
  for (const PodStats* p : job.members)
    for (const auto& [peer, _] : p->peer_rates)
      if (!stats.pods.count(peer)) return false;
  if (auto roster = stats.job_ps.find(job_key); roster != stats.job_ps.end()) {
    const std::string ns = job_key.substr(0, job_key.find('/'));
    for (const std::string& ps : roster->second)
      if (!stats.pods.count(PodKey(ns, ps))) return false;
  }
  return true;
}

// A pod the kubelet is restarting, or that restarted since it went quiet:
// pod_restarting names it, with the exit that stopped it.
bool Restarting(const PodStats& p) {
  if (p.crash_looping) return true;
  if (p.restarts_increase && *p.restarts_increase > 0 && p.quiet) {
    const auto& last = p.meta.last_termination;
    if (!last || !last->finished_at_s) return true;
    return *last->finished_at_s >= p.quiet->since_t - p.quiet->seconds;
  }
  return false;
}

bool Coordinates(Role role) {
  return role == Role::kChief || role == Role::kEvaluator;
}

// A checkpoint being written, or an evaluation: the steps pause for a
// while. Only the chief or evaluator computing, or every rank computing,
// is an evaluation.
// `whole_job`: the view holds every rank (one rank computing on a node that
// holds only it is no evaluation of every rank).
bool Pausing(const std::vector<RankView>& ranks, bool whole_job,
             const StallSettings& s) {
  bool every_rank_computing = whole_job;
  bool coordinator_computing = false;
  bool other_rank_differs = false;
  for (const RankView& r : ranks) {
    const QuietTail& q = *r.pod->quiet;
    if (q.io_write_bytes_per_second.value_or(0) >=
        s.checkpoint_bytes_per_second)
      return true;
    const bool computing = r.activity == RankActivity::kComputing;
    if (RunsTrainingSteps(r.pod->meta.role) && !computing)
      every_rank_computing = false;
    if (Coordinates(r.pod->meta.role) && computing) {
      coordinator_computing = true;
    } else if (r.activity != RankActivity::kWaiting) {
      other_rank_differs = true;
    }
  }
  return every_rank_computing || (coordinator_computing && !other_rank_differs);
}

// Programs that all ended: a job that finished (or was stopped whole), not
// one that hangs.
bool EveryRankExited(const std::vector<RankView>& ranks) {
  return std::all_of(ranks.begin(), ranks.end(), [](const RankView& r) {
    return !RunsTrainingSteps(r.pod->meta.role) ||
           r.activity == RankActivity::kExited;
  });
}

// A rank busy on CPU while the others idle computes, even when a loaded
// node gives its spinning thread less than computing_cores.
void MarkStandOutComputing(std::vector<RankView>& ranks,
                           const StallSettings& s) {
  for (RankView& r : ranks) {
    if (r.activity != RankActivity::kWaiting) continue;
    const double cores = r.pod->quiet->cpu_cores.value_or(0);
    if (cores < 2 * s.idle_cores) continue;
    double others = 0;
    for (const RankView& o : ranks)
      if (&o != &r)
        others = std::max(others, o.pod->quiet->cpu_cores.value_or(0));
    if (cores >= s.stand_out_factor * std::max(others, 0.01))
      r.activity = RankActivity::kComputing;
  }
}

// The rank that differs: the most telling activity; among equals, the one
// quiet longest (it stopped first).
const RankView* Suspect(const std::vector<RankView>& ranks) {
  const RankView* best = nullptr;
  for (const RankView& r : ranks) {
    if (r.activity == RankActivity::kWaiting) continue;
    if (!best || r.activity < best->activity ||
        (r.activity == best->activity &&
         r.pod->quiet->seconds > best->pod->quiet->seconds))
      best = &r;
  }
  return best;
}

std::string WhatToLook(RankActivity a, const PodMeta& meta,
                       const std::string& peer) {
  switch (a) {
    case RankActivity::kExited:
      return fmt::format(
          "Its program is gone: read why with kubectl logs -n {} {} "
          "--previous, and whether the job restarts lost ranks.",
          meta.namespace_name, meta.pod);
    case RankActivity::kStopped:
      return "Its processes are stopped (state T): find who sent SIGSTOP or "
             "holds it under a debugger (ptrace), and send SIGCONT.";
    case RankActivity::kBlockedIo:
      return "It is blocked in IO (state D): cat /proc/<pid>/stack and "
             "/proc/<pid>/wchan show where; check its volumes' mounts (NFS, "
             "FUSE, CSI) and dmesg for hung-task messages.";
    case RankActivity::kLinkDead:
      return fmt::format(
          "Nothing comes back from {}: check the path between the two pods "
          "(ss -ti shows retransmissions; NetworkPolicy, CNI, MTU, the "
          "nodes' links).",
          peer);
    case RankActivity::kComputing:
      return "It computes while the others wait on it: dump its stacks "
             "(py-spy dump --pid <pid>, or trainscope profile) to see the "
             "loop it is in.";
    case RankActivity::kWaiting:
      break;
  }
  return "";
}

std::string FrameworkTimeouts(Framework f) {
  if (f == Framework::kPyTorch)
    return "Every rank waits in a collective: dump all ranks' stacks "
           "(py-spy dump) to find the one that took another path; a "
           "timeout (init_process_group(timeout=...), "
           "TORCH_NCCL_ASYNC_ERROR_HANDLING=1) turns a hang into an error.";
  if (f == Framework::kTensorFlow || f == Framework::kTensorFlow1 ||
      f == Framework::kTensorFlow2)
    return "Every rank waits: check the chief/coordinator and the PS "
           "answer (their logs, their gRPC ports); an RPC deadline turns a "
           "hang into an error.";
  return "Every rank waits on the others: check the coordinator (chief, "
         "PS, rendezvous) and dump every rank's stacks.";
}

Finding StallFinding(const StalledJob& job, const std::vector<RankView>& ranks,
                     const RankView* suspect, bool whole_job, double quiet_s,
                     double line) {
  const PodMeta& any = (suspect ? suspect->pod : job.steppers.front())->meta;
  Diagnosis d =
      NewDiagnosis(kTrainingStalled,
                   whole_job ? Severity::kCritical : Severity::kWarning, any);
  if (!suspect) {
    d.pod.clear();
    d.node.clear();
  }
  const std::string job_name =
      fmt::format("{}/{}", any.namespace_name, any.training_job);
  const std::string reason = std::string(
      SuspectReason(suspect ? suspect->activity : RankActivity::kWaiting));
  if (!whole_job) {
    d.summary = fmt::format(
        "Worker {} of {} has made no step for {:.0f} s while the other "
        "workers go on ({}).",
        any.pod, job_name, quiet_s, reason);
  } else if (suspect) {
    d.summary = fmt::format(
        "Job {} has made no step for {:.0f} s: {} is {} while the other "
        "ranks wait on it.",
        job_name, quiet_s, any.pod, reason);
  } else {
    d.summary = fmt::format(
        "Job {} has made no step for {:.0f} s and every rank waits on the "
        "others: no rank differs.",
        job_name, quiet_s);
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const RankView& r : ranks) rows.push_back(RankRow(r, &r == suspect));
  d.evidence = {{"suspect_reason", reason},
                {"stalled_seconds", Round4(quiet_s)},
                {"threshold_seconds", Round4(line)},
                {"ranks", std::move(rows)}};
  std::vector<double> rates;
  for (const PodStats* p : job.steppers)
    if (p->steps_per_second && *p->steps_per_second > 0)
      rates.push_back(*p->steps_per_second);
  if (!rates.empty())
    d.evidence["median_step_seconds"] = Round4(1 / Median(rates));
  if (suspect && !suspect->unanswered_peer.empty())
    d.evidence["unreachable_peer"] = suspect->unanswered_peer;
  d.recommendations.push_back(
      suspect ? WhatToLook(suspect->activity, any, suspect->unanswered_peer)
              : FrameworkTimeouts(any.framework));
  // Event: the quiet time is the debounce (min_stall_s of nothing).
  return Finding{Finding::Level::kEvent, std::move(d)};
}

// An asynchronous PS job goes on without its `quiet` workers when another
// of its workers in the view exchanges, or when one of its PS exchanges a
// step's worth with such workers in the evaluation window (`recent`; they
// may be on other nodes). Returns what one going worker exchanges (bytes/s;
// its fullest interval, or its share of a PS), empty when none goes on. A
// PS busy with the coordinator alone is no evidence: at start-up a TF2
// coordinator writes the initial variables to the PS while every worker
// waits for its first step (a real job on a loaded CI machine: both
// workers quiet past the 10 s stall line).
std::optional<double> GoingWorkerRate(const StalledJob& job,
                                      const std::vector<const PodStats*>& quiet,
                                      const WindowStats& recent) {
  auto is_quiet = [&](const std::string& key) {
    return std::any_of(quiet.begin(), quiet.end(), [&](const PodStats* p) {
      return PodKey(p->meta.namespace_name, p->meta.pod) == key;
    });
  };
  std::vector<double> going;
  for (const PodStats* p : job.steppers)
    if (std::find(quiet.begin(), quiet.end(), p) == quiet.end())
      going.push_back(p->quiet->reference_bytes_per_second);
  if (!going.empty()) return Median(going);
  std::optional<double> best;
  for (const PodStats* member : job.members) {
    if (member->meta.role != Role::kPs || !member->quiet) continue;
    auto ps =
        recent.pods.find(PodKey(member->meta.namespace_name, member->meta.pod));
    if (ps == recent.pods.end()) continue;
    double with_workers = 0;
    int workers = 0;
    for (const auto& [peer, rate] : ps->second.peer_rates) {
      if (!RunsTrainingSteps(PeerRole(recent, peer)) || is_quiet(peer) ||
          OfAnotherJob(recent, peer, member->meta.training_job))
        continue;
      with_workers += rate.receive_bytes + rate.transmit_bytes;
      ++workers;
    }
    const double line =
        std::max(kQuietFloorBytesPerSecond,
                 kQuietFraction * member->quiet->reference_bytes_per_second);
    if (with_workers >= line)
      best = std::max(best.value_or(0), with_workers / workers);
  }
  return best;
}

// Bytes a worker exchanged with its job's PS in the range before its quiet
// tail.
double PsBytesBeforeTail(const PodStats& worker, const WindowStats& stats) {
  auto with_ps = [&](const std::map<std::string, PeerCounters>& rates) {
    double sum = 0;
    for (const auto& [peer, rate] : rates)
      if (PeerRole(stats, peer) == Role::kPs &&
          !OfAnotherJob(stats, peer, worker.meta.training_job))
        sum += rate.receive_bytes + rate.transmit_bytes;
    return sum;
  };
  return with_ps(worker.peer_rates) * worker.span_seconds -
         with_ps(worker.quiet->peer_rates) * worker.quiet->seconds;
}

// A worker of a PS job showed no step in the range when it exchanged
// (nearly) nothing with the PS before its tail, or when its fullest
// interval stayed under the quiet line of what a going worker exchanges:
// its tail is anchored by the coordinator handing it the step function,
// and it is still starting (a TF2 worker tracing its first closure on a
// loaded node while the other worker stepped). A tail longer than the
// range was anchored by the node view's memory of steps before it.
bool NeverStepped(const PodStats& worker, const WindowStats& stats,
                  double going_rate) {
  if (worker.quiet->seconds > worker.span_seconds) return false;
  return PsBytesBeforeTail(worker, stats) <
             kQuietFloorBytesPerSecond * worker.span_seconds ||
         worker.quiet->reference_bytes_per_second < kQuietFraction * going_rate;
}

// Only a rank that went quiet in the evaluation window can have stalled:
// the longer history (computed on first use; the cluster view evaluates 40
// windows per report) is read only then.
bool AnyRankQuietNow(const WindowStats& recent) {
  return std::any_of(recent.pods.begin(), recent.pods.end(), [](auto& kv) {
    const PodStats& p = kv.second;
    return RunsTrainingSteps(p.meta.role) && p.quiet &&
           (!p.quiet->anchored || p.quiet->seconds >= 0.5 * p.span_seconds);
  });
}

}  // namespace

void DetectTrainingStalled(const DetectorInput& in, const StallSettings& s,
                           std::vector<Finding>& out) {
  if (!AnyRankQuietNow(in.recent)) return;
  const WindowStats& stats = in.baseline.get();
  for (const auto& [key, job] : JobsOf(stats)) {
    if (job.steppers.empty()) continue;
    const double line = StallLine(job, s);
    std::vector<const PodStats*> quiet;
    for (const PodStats* p : job.steppers)
      if (p->quiet->seconds >= line) quiet.push_back(p);
    if (quiet.empty()) continue;
    if (std::any_of(job.members.begin(), job.members.end(),
                    [](const PodStats* p) { return Restarting(*p); }))
      continue;
    std::vector<RankView> ranks;
    bool ps_serving = false;
    for (const PodStats* p : job.members) {
      if (!p->quiet) continue;
      if (p->meta.role == Role::kPs && p->quiet->seconds < line)
        ps_serving = true;
      ranks.push_back(ClassifyRank(*p, s));
    }
    MarkStandOutComputing(ranks, s);
    const bool whole_job = quiet.size() == job.steppers.size() && !ps_serving;
    if (whole_job && EveryRankExited(ranks)) continue;  // it finished
    if (whole_job) {
      double quiet_s = quiet.front()->quiet->seconds;
      for (const PodStats* p : quiet)
        quiet_s = std::min(quiet_s, p->quiet->seconds);
      const bool in_view =
          WholeJobInView(job, stats, PodKey(key.first, key.second));
      if (Pausing(ranks, in_view, s) && quiet_s < s.pause_grace_s) continue;
      const RankView* suspect = Suspect(ranks);
      // The rank that differs may be on another node.
      if (!suspect && !in_view) continue;
      out.push_back(StallFinding(job, ranks, suspect, true, quiet_s, line));
      continue;
    }
    if (!job.has_ps) continue;  // ranks of a ring stop together
    const auto going_rate = GoingWorkerRate(job, quiet, in.recent);
    if (!going_rate) continue;
    for (const PodStats* p : quiet) {
      if (NeverStepped(*p, stats, *going_rate)) continue;
      auto own = std::find_if(ranks.begin(), ranks.end(),
                              [p](const RankView& r) { return r.pod == p; });
      if (own == ranks.end()) continue;
      if (p->quiet->io_write_bytes_per_second.value_or(0) >=
              s.checkpoint_bytes_per_second &&
          p->quiet->seconds < s.pause_grace_s)
        continue;
      std::vector<RankView> mine = {*own};
      out.push_back(StallFinding(job, mine, &mine.front(), false,
                                 p->quiet->seconds, line));
    }
  }
}

}  // namespace trainscope::diagnosis
