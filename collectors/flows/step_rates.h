#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "flows/burst.h"
#include "flows/flows_options.h"
#include "flows/peers.h"
#include "flows/step_period.h"
#include "trainscope/pod.h"

namespace trainscope {

struct StepRateSettings {
  // Each estimate looks at the newest bursts of a stream: first the last
  // `short_window_s`, which counts only when a comb, or the count of a
  // train of whole exchanges, finds at least `short_window_cycles` periods
  // in it (so a rate that changes is followed within seconds), then at
  // least `min_window_s`, doubling up to `max_window_s` (slow steps); at
  // least `short_window_bursts`, then `min_bursts` bursts.
  double short_window_s = 12;
  int short_window_cycles = 4;
  size_t short_window_bursts = 8;
  double min_window_s = 30;
  double max_window_s = 120;
  size_t min_bursts = 12;
  // A shaped link splits one exchange into several bursts (TCP waiting on
  // its window): 512 holds 30 s of a stream with 15 bursts a second.
  size_t max_bursts_per_stream = 512;
  // Connections per stream whose exchange in progress is kept (JoinTurn);
  // beyond that the one silent longest is dropped.
  size_t max_connections_per_stream = 64;
  // Bursts of a peer's connections this close join into one exchange
  // (AddToTrain): the burst gap (--step-burst-gap).
  double merge_gap_s = kDefaultBurstGapSeconds;
  // How long a stream's estimate from a window longer than the short one,
  // or its lack of one after trying them, stands before the stream is
  // estimated again: a train with no clear period in the short window (cut
  // exchanges, slow steps) shows one, if at all, only after every merge
  // scale of every window failed, and such a window gains a sixth of new
  // bursts per 5 s interval. Estimating every stream of a node whose
  // streams all arrived cut every interval took 5.6% of a core. An estimate
  // over the short window is made anew every interval: a cut train's comb
  // there can catch its pieces' rhythm for a while, and standing 10 s such
  // a misreading weighed five times as much (at a 2 s interval); the worst
  // worker of cluster-uplink-saturated read 12-70% high in five runs, 9-17%
  // in three with only the longer windows' estimates standing.
  double refresh_s = 10;
  PeriodSettings period;
};

// One pod's step rate from the periodicity of its exchanges with its peers.
struct StepRate {
  std::optional<double> steps_per_second;  // empty: no clear period
  size_t streams = 0;       // (peer, direction) streams with a period
  size_t streams_seen = 0;  // streams with bursts in the window
  double jitter = 0;        // of the stream nearest the pod's rate
  // An allreduce rank given its job's agreed rate (ReconcileRanks).
  bool from_job_ranks = false;
};

// A train that looks whole (one size, a steady rhythm) but whose "step"
// moves at most 1/kPiecesPerKnownStep of the bytes the stream moved per step
// while its exchanges were whole is the pieces of a step, not steps: a
// training step moves the same variables or gradients every time, while a
// saturated link (a ring allreduce through a shaped uplink, a PS link cut
// mid-run) carries its continuous traffic in equal pieces at the rhythm TCP
// and the ring's chunks set, with no silence marking the steps (issue 31:
// a real DDP ring read 8.6 steps/s against 1.42). Such a window is counted
// over the known step size (EstimatePeriodByStepBytes) and never replaces
// it. 1.5: the threshold of PiecesPerStep (step_period.cc), the same
// question asked of the comb.
inline constexpr double kPiecesPerKnownStep = 1.5;
bool PiecesOfKnownStep(const PeriodEstimate& e, double known_step_bytes);

// The share of a window's span (first start to last end) its bursts are
// busy: how much of the time the stream moves bytes.
double BusyShare(std::span<const BurstPoint> window);

// A period is trusted when something in the traffic ties it to the steps:
// the turns (a request marks each step), a step size the stream showed
// earlier, or exchanges with the compute's silence between them. A
// link-bound pod (its streams together busy at least kLinkBoundBusyShare
// of the last short window: a saturated link, no compute silence between
// steps) has no such silence: its traffic comes in pieces at the rhythm TCP
// and a ring's chunks set, equal or of any size, and the small messages the
// other way follow them. There, a stream that never showed a step's size
// (saturated from its first step) gives no period unless its turns give
// one (issue 31: no rate rather than a confident wrong one), and its window
// teaches it no step size. Measured, pods' busy share over 12 s (median):
// rings through an uplink shaped from the start 0.64-0.78 (built-in: the
// comb read 0.95-1.0 steps/s against 0.64; real DDP over gloo: the 48-byte
// messages back read 16.1-16.6 against 0.67); healthy rings 0.01-0.07, PS
// workers behind a saturated PS link 0.32-0.59 (their turns anchor them).
inline constexpr double kLinkBoundBusyShare = 0.5;
// `busy_share`: the stream's window's (BusyShare); `pod_busy_share`: of
// all the pod's streams together over the last short window.
bool UnanchoredPeriod(const PeriodEstimate& e, double busy_share,
                      double pod_busy_share);

// A slowdown the window's estimate lags behind: when the last three gaps
// between big bursts (over 30% of the window's 90th-percentile burst) are
// all over kRateChange times the estimated period, the worker slowed down
// (a straggler, an IO stall) and their mean is its period now. Not for a
// speed-up: shorter gaps are as often the pieces of a split exchange; the
// windows follow a faster rate within 30 s. Empty otherwise.
inline constexpr double kRateChange = 1.6;
std::optional<PeriodEstimate> RecentChange(std::span<const BurstPoint> window,
                                           double period_s);

// Ranks of one allreduce job step together: their rates can only differ by
// noise. Per job, the largest set of its local ranks whose rates agree
// within `tolerance` (relative to its slowest) is trusted when it is a
// strict majority of the ranks with a rate; a rate outside it is a misread
// (a contended link cut that rank's streams). When the set is also a strict
// majority of the ranks whose exchanges were seen, a rank outside it or
// without a period takes the set's median (`from_job_ranks`): the ring
// cannot step without it. Otherwise a rate outside the set is withdrawn.
// Without such a majority (two ranks that disagree; a ring paced by one slow
// link, which sends its chunks at a uniform pace with no silence marking the
// steps) every rank's rate is withdrawn. `pods` and `peer_pods` (may be
// null) tell the jobs' roles.
void ReconcileRanks(std::map<std::string, StepRate>& rates, const PodList& pods,
                    const PodList* peer_pods, double tolerance = 0.15);

// Burst trains per (local pod, peer pod, direction), bounded in time and
// count; forgets the pods that left. The rate of a pod is the median of its
// streams' rates: every peer of a training step is exchanged with once per
// step, so the streams agree unless one is not a step's. Streams of whole
// exchanges (WholeExchangeBytes, step_period.h) outvote the cut ones: when a
// pod has at least two, and they are at least half of its streams with a
// period, only they vote (a comb over a contended link's pieces finds their
// rhythm, not the steps').
class StepRateTracker {
 public:
  explicit StepRateTracker(StepRateSettings s = {}) : s_(s) {}

  // Bursts whose local pod or peer is no known pod are dropped: a period
  // with an unknown peer says nothing about training. The bursts of a
  // peer's connections join into its exchanges (AddToTrain).
  void Add(const std::vector<BurstEvent>& events, const PeerResolver& resolver);
  // Drops streams of pods no longer in `pods` (local or peer side) and
  // bursts older than the longest window before `now_s`.
  void Prune(const PodList& pods, const PodList* peer_pods, double now_s);
  // Every local pod with bursts, by uid. A stream whose newest burst is
  // older than three of its periods (plus a second) is stale: its pod has
  // stopped exchanging, so it gives no rate. Each stream remembers the size
  // of a step's exchange while its exchanges are whole; once they are cut,
  // its bytes over that size count its steps (EstimatePeriodByStepBytes).
  // Streams are estimated anew when due (refresh_s).
  std::map<std::string, StepRate> Rates(double now_s);
  size_t streams() const { return streams_.size(); }
  // One line per stream (pod, peer, direction, bursts, newest bursts, the
  // last estimate: whole or cut, from the turns or not, its period or none,
  // and its age), for --log-level debug.
  std::vector<std::string> Describe(double now_s) const;

 private:
  using StreamKey = std::tuple<std::string, std::string, FlowDirection>;
  // A connection by its ports (the pod and peer are the stream's).
  using Connection = std::pair<uint16_t, uint16_t>;
  // The pieces of a connection's current turn (BurstEvent::turn) so far.
  struct OpenExchange {
    uint32_t turn = 0;
    BurstPoint joined;
  };
  struct Stream {
    std::deque<BurstPoint> bursts;  // by start time
    // The bursts joined further: the pieces of one turn of a connection
    // make one exchange (JoinTurn), however long the silences a contended
    // link cut it at. Empty when the source reports no connections.
    std::deque<BurstPoint> exchanges;
    std::map<Connection, OpenExchange> open_exchanges;
    // Of one step's exchange, from the newest window of whole exchanges;
    // 0 before one.
    double step_bytes = 0;
    // The last estimate, when it was made, and when the next is due.
    std::optional<PeriodEstimate> period;
    double estimated_s = 0;
    std::optional<double> due_s;  // empty: at the next Rates
  };
  // The stream's period over the shortest window that shows one, the span
  // of that window (of the longest tried when none does) and the history it
  // held (less than the span in a young stream).
  struct WindowEstimate {
    std::optional<PeriodEstimate> period;
    double span_s = 0;
    double held_s = 0;
  };
  WindowEstimate StreamPeriod(const Stream& stream,
                              double pod_busy_share) const;
  // Adds a burst to its connection's exchange; a new turn there moves the
  // exchange so far into `stream.exchanges`.
  void JoinTurn(Stream& stream, const BurstEvent& e) const;
  // The period of the stream's exchanges that started at `from_s` or later,
  // when they are whole (one size, one per step): the turns mark the steps
  // where a contended link cut the bursts.
  std::optional<PeriodEstimate> ExchangePeriod(const Stream& stream,
                                               double from_s) const;
  // The stream's estimate as of `now_s`: made anew when due.
  std::optional<PeriodEstimate> CurrentPeriod(Stream& stream, double now_s,
                                              double pod_busy_share);
  // Per local pod, the BusyShare of all its streams' bursts together over
  // the last short window (UnanchoredPeriod).
  std::map<std::string, double> PodBusyShares() const;

  StepRateSettings s_;
  std::map<StreamKey, Stream> streams_;
};

}  // namespace trainscope
