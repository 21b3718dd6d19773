#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <span>
#include <vector>

namespace trainscope {

// One exchange burst as the period estimate sees it.
struct BurstPoint {
  double start_s = 0;
  uint64_t bytes = 0;
  double end_s = 0;  // last packet; start_s when unknown
};

struct PeriodSettings {
  // Bursts smaller than this fraction of the 90th percentile burst are
  // requests, acknowledgements and keep-alives, not the step's exchange.
  double big_burst_fraction = 0.3;
  // How well the bursts must line up on a comb of the period: the byte-
  // weighted mean resultant length of their phases (1 = every burst at the
  // same phase; Gaussian jitter of 15% of the period gives about 0.64).
  double min_alignment = 0.6;
  // Fewer whole periods than this between the first and the last big burst
  // is no evidence of a period.
  int min_cycles = 4;
  size_t max_candidates = 16;
  // Rayleigh's statistic n x alignment^2 at least this: a few bursts line
  // up on some comb by chance (p about exp(-z): 0.7% at 5).
  double min_rayleigh_z = 5;
  // The volume estimate: the most common big-burst size (within this
  // relative tolerance) must be that of at least this share of the big
  // bursts and carry at least this share of their bytes.
  double size_tolerance = 0.05;
  double min_modal_share = 0.5;
};

struct PeriodEstimate {
  // kStepBytes: the volume over a step's exchange size the stream showed
  // earlier, while its exchanges were whole (EstimatePeriodByStepBytes).
  enum class Method { kComb, kVolume, kStepBytes };
  Method method = Method::kComb;
  double period_s = 0;
  double alignment = 0;  // comb: see PeriodSettings; volume: modal share
  double jitter = 0;     // residual standard deviation / period
  int cycles = 0;        // whole periods the fit spans
  size_t bursts = 0;     // big bursts used
  // The train is of whole exchanges (WholeExchangeBytes): one per step, never
  // cut by a contended link.
  bool whole_exchanges = false;
  // With whole_exchanges: the bytes the stream moves per step, the small
  // bursts beside the exchange included (0 when unknown).
  double step_bytes = 0;
  // Of the bursts joined by their connections' turns (StepRateTracker).
  bool from_turns = false;
};

// The period at which `bursts` (sorted by start) repeat, or empty when they
// show no clear one. Robust to jitter, missing bursts (a skipped cycle keeps
// the comb) and small bursts in between (filtered by size); two interleaved
// periods of similar weight line up on neither comb and give no estimate.
// Among the candidate periods (the typical gaps between big bursts) it
// keeps the longest that aligns: every fraction P/k of the true period P
// aligns as well, no multiple of it does.
std::optional<PeriodEstimate> EstimatePeriod(std::span<const BurstPoint> bursts,
                                             const PeriodSettings& s = {});

// The burst size most bursts share (within +-tolerance of it), how many do,
// and the share of all the bytes those bursts carry: near 1 for a stream of
// whole exchanges, one per step; low for the pieces a contended link cuts.
struct ModalSize {
  double bytes = 0;
  size_t count = 0;
  double byte_share = 0;
};
ModalSize DensestSize(std::span<const BurstPoint> bursts, double tolerance);

// The period from the bytes a step exchanges, for trains whose timing is too
// irregular for a comb (workers contending for one PS pull it at varying
// phases of their step): every step exchanges the same variables, so the
// most common big-burst size is the bytes of one step, and the bytes of all
// bursts between the first and the last big burst's start (pieces of split
// exchanges included), over that size, are the steps taken in that time.
// Empty without a dominant size.
std::optional<PeriodEstimate> EstimatePeriodByVolume(
    std::span<const BurstPoint> bursts, const PeriodSettings& s = {});

// The period from the bytes of one step's exchange, known from an earlier
// train of whole exchanges of the same stream: the bytes between the first
// and the last big burst's start over `step_bytes` are the steps taken in
// that time. For a train cut into pieces at a rhythm not the steps': a rank
// whose allreduce partner is throttled by its CPU quota moves its ring's
// chunks once per CFS period (100 ms), a clean comb that carries a varying
// part of a step's gradients per tooth. Empty under min_cycles steps.
std::optional<PeriodEstimate> EstimatePeriodByStepBytes(
    std::span<const BurstPoint> bursts, double step_bytes,
    const PeriodSettings& s = {});

// `bursts` (sorted by start) with those separated by at most `gap_s` of
// silence joined into one (first start, last end, bytes summed): one step's
// exchange that a slow or shaped link split into pieces becomes one burst
// again.
std::vector<BurstPoint> MergeBursts(std::span<const BurstPoint> bursts,
                                    double gap_s);

// Adds `burst` to `train` (bursts of one pod, peer and direction, ordered by
// start), joining it with every burst it overlaps or comes within `gap_s` of:
// MergeBursts for bursts that come in any order. A peer's connections each
// report their piece of one exchange, in no order between connections (each
// piece arrives when its own connection next sends). Returns how many
// seconds more the train's bursts span, so a piece inside an exchange
// already counted adds nothing.
double AddToTrain(std::deque<BurstPoint>* train, const BurstPoint& burst,
                  double gap_s);

// The silence that separates steps when the silences between bursts fall in
// two clear groups (a step's pieces: ring-allreduce chunks, TCP stalls,
// request and response; then the long silence until the next step): the
// geometric mean of the two groups' nearest members, when they differ at
// least `min_ratio` times and the long group has at least `min_long`
// members. Empty when there is no such split.
std::optional<double> NaturalMergeGap(std::span<const BurstPoint> bursts,
                                      size_t min_long = 4,
                                      double min_ratio = 3);

// The fixed merge gaps EstimatePeriodAtAnyScale tries after the natural one,
// smallest first: the kernel's bursts as they are, then joined over longer
// and longer silences.
inline constexpr double kMergeGaps[] = {0, 0.05, 0.1, 0.2, 0.4};

// A train of whole exchanges: at least kWholeExchangeByteShare of its bytes
// come in big bursts (PeriodSettings::big_burst_fraction) of one size
// (within kWholeExchangeTolerance), one per step. A contended link cuts its
// exchanges into pieces of any size at irregular points instead.
inline constexpr double kWholeExchangeTolerance = 0.1;
inline constexpr double kWholeExchangeByteShare = 0.8;
// Returns the size of one step's exchange then (the densest size among the
// big bursts), else empty.
std::optional<double> WholeExchangeBytes(std::span<const BurstPoint> bursts);

// The bursts merged at the natural gap, then at each of kMergeGaps in turn,
// the comb (EstimatePeriod) then the volume estimate at each; the first that
// shows a period wins. The natural gap joins exactly the pieces of one step;
// of the fixed ones the smallest that works keeps short steps apart.
std::optional<PeriodEstimate> EstimatePeriodAtAnyScale(
    std::span<const BurstPoint> bursts, const PeriodSettings& s = {});

}  // namespace trainscope
