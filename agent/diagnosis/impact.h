#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "diagnosis/diagnosis.h"
#include "diagnosis/window.h"

namespace trainscope::diagnosis {

// What a diagnosis costs its job, and what fixing it would buy. The models
// per kind are in docs/diagnosis.md ("Cost and expected speed-up"); each
// detector picks its own and writes it with SetImpact.

// Below this cost a condition is info, above kCriticalAboveCost critical.
inline constexpr double kInfoBelowCost = 0.05;
inline constexpr double kCriticalAboveCost = 0.5;
// Costs are capped here, so an expected speed-up is at most 20x: beyond,
// the next bottleneck decides and no model of this one can say.
inline constexpr double kMaxCost = 0.95;

Severity SeverityOfCost(double cost_fraction);
// The job's expected step-rate ratio once the cost is gone: 1/(1-cost).
double SpeedupOfCost(double cost_fraction);
double CostOfSpeedup(double speedup);

// A model named with this suffix gives a bound, not an estimate (a stand-in
// input such as a link's utilization for the time spent on it): it can show
// a condition harmless (info), never make it critical.
inline constexpr std::string_view kUpperBoundSuffix = "_upper_bound";

// Writes evidence.cost_fraction, evidence.expected_speedup and
// evidence.cost_model, and the severity the cost implies (at most warning
// for an upper bound; never below `at_least`: an imminent OOM kill is
// critical whatever it costs now).
void SetImpact(Diagnosis& d, double cost_fraction, std::string_view model,
               Severity at_least = Severity::kInfo);

// Fraction of the time the job's step-running pods spend exchanging with
// `peer_key` (median over those that exchange with it), read from the
// workers' side, else from the peer's own bursts with them. Empty when no
// exchange time is known (bursts off, an agent of an older release).
std::optional<double> WorkerExchangeShare(const WindowStats& stats,
                                          const PodMeta& job,
                                          const std::string& peer_key);

// A PS whose link carries at least this share of its capacity (in either
// direction; network_saturated's exit ratio, so a link it holds as
// saturated) is where its workers queue: those bytes are their exchanges.
// (Not its CPU: a PS at its CPU limit may be busy with other work, and its
// workers need not wait.)
inline constexpr double kSaturatedPsBusyRatio = 0.7;

// The fuller direction of the PS' link against its capacity; empty without
// a capacity.
std::optional<double> PsLinkBusyRatio(const PodStats& ps);

// Fraction of the time the job's step-running pods wait on `peer_key`'s
// answers: from each request they send it to the end of its answer
// (PeerCounters::wait_seconds; median over those that waited on it), read
// from their side only (the peer's own waits are on them). Empty when not
// measured (bursts off, an agent of an older release, no request seen).
std::optional<double> WorkerRequestWaitShare(const WindowStats& stats,
                                             const PodMeta& job,
                                             const std::string& peer_key);

// The share of their time the job's workers wait on PS `ps_key`. Their
// exchange share with it (WorkerExchangeShare) counts exchange bursts only,
// and a slow sender (a shaped or full link, a throttled or busy CPU)
// pauses longer than the burst gap inside one answer: those silences are
// waits the bursts leave out. Two measures count them, and the larger
// stands in for the bursts' figure where it is larger still:
// - kRequests: the workers' request-to-answer time with the PS
//   (WorkerRequestWaitShare), whatever keeps the PS from answering;
// - kSaturatedLink: when the PS' link is saturated (`ps_link_busy` >=
//   kSaturatedPsBusyRatio) the workers wait on it whenever they do not
//   compute (1 - the median worker's CPU, or GPU, share): on a link full
//   in the direction of the workers' gradients the wait is in sending
//   them, which no request of theirs brackets.
// Empty without exchange times.
struct WorkerWait {
  enum class Source { kExchange, kRequests, kSaturatedLink };
  double share = 0;
  double exchange_share = 0;  // the bursts' own figure
  std::optional<double> request_wait_share;
  Source source = Source::kExchange;
  bool raised = false;  // share > exchange_share (source not kExchange)
};
std::optional<WorkerWait> WorkerWaitShare(const WindowStats& stats,
                                          const PodMeta& job,
                                          const std::string& ps_key,
                                          std::optional<double> ps_link_busy);
// Writes `worker_exchange_share`, `worker_request_wait_share` when
// measured, and `worker_wait_share` when raised, into `evidence`; returns
// the cost model's name for the share: worker_exchange_share,
// worker_request_wait_share or saturated_ps_wait_share.
std::string NoteWorkerWait(const WorkerWait& wait, nlohmann::json& evidence);

// A PS whose CPU use is under this share of its limit (or its node's
// cores) has room: its workers' wait on it is not CPU starvation.
inline constexpr double kPsCpuRoomRatio = 0.8;

// What more CPU gives back of the workers' wait on PS `ps_key`, which is
// stalled for CPU `stall` of the time: the part of the wait beyond what the
// job's other PS with CPU room (or not in this view) make the same workers
// wait per byte at the same time, under the same load: 1 - their pace /
// this PS' pace, pace = seconds waited per byte exchanged (`from_pace`;
// `pace_ratio` is their pace over this one's). Without such peers or
// without waits, the stall stands in (PSI some counts the cgroup stalled
// while any task waits, a busy neighbour such as a hog too).
struct CpuGain {
  double factor = 0;
  bool from_pace = false;
  std::optional<double> pace_ratio;
};
CpuGain PsCpuGain(const WindowStats& stats, const PodMeta& job,
                  const std::string& ps_key, double stall);

// Fraction of the time `pod_key` spends exchanging with any peer (capped at
// 1); empty when unknown.
std::optional<double> PodExchangeShare(const WindowStats& stats,
                                       const std::string& pod_key);

// Seconds of exchange per byte between the job's step-running pods and
// `peer_key` (median over pods), and the same over the job's other peers:
// how much slower this peer serves a byte than the rest of the job.
struct ExchangePace {
  double this_peer = 0;    // seconds per byte
  double other_peers = 0;  // seconds per byte
};
std::optional<ExchangePace> PeerExchangePace(const WindowStats& stats,
                                             const PodMeta& job,
                                             const std::string& peer_key);

// A cost of one step-running pod's own step time, as a cost of its job:
// when the pod runs slower than its peers (its own pace: asynchronous
// training), fixing it adds its missing steps to the job's total, up to the
// peers' median pace; when it keeps its peers' pace, in a job with PS
// (asynchronous) it costs nothing, in one without (allreduce: every rank
// waits for it each step) the pod's cost is the job's; without step rates
// the pod's cost is the job's. Adds "_x_job_share" to `model` when it scaled
// the cost (before a
// "_upper_bound" suffix, which stays last).
double JobCostOfPod(const WindowStats& stats, const std::string& pod_key,
                    double pod_cost, std::string& model);

// Seconds of exchange per byte of a pod with all its peers; empty without
// exchange times.
std::optional<double> PodExchangePace(const PodStats& pod);

// A pod's stall: the fraction of wall time its tasks waited on `resource`
// ("cpu", "io", "memory"; PSI some), empty when not measured.
std::optional<double> StallShare(const PodStats& pod,
                                 std::string_view resource);

}  // namespace trainscope::diagnosis
