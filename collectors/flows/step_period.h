#pragma once

#include <cstddef>
#include <cstdint>
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
};

struct PeriodEstimate {
  double period_s = 0;
  double alignment = 0;  // see PeriodSettings::min_alignment
  double jitter = 0;     // residual standard deviation / period
  int cycles = 0;        // whole periods the fit spans
  size_t bursts = 0;     // big bursts used
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

// `bursts` (sorted by start) with those separated by at most `gap_s` of
// silence joined into one (first start, last end, bytes summed): one step's
// exchange that a slow or shaped link split into pieces becomes one burst
// again.
std::vector<BurstPoint> MergeBursts(std::span<const BurstPoint> bursts,
                                    double gap_s);

// The merge gaps EstimatePeriodAtAnyScale tries, smallest first: the
// kernel's bursts as they are, then joined over longer and longer silences.
inline constexpr double kMergeGaps[] = {0, 0.05, 0.1, 0.2, 0.4};

// EstimatePeriod of the bursts merged at each of kMergeGaps in turn; the
// first that shows a clear period wins. The smallest scale that works keeps
// short steps apart; a larger one only joins pieces of one exchange, since
// a merge across steps leaves no regular train.
std::optional<PeriodEstimate> EstimatePeriodAtAnyScale(
    std::span<const BurstPoint> bursts, const PeriodSettings& s = {});

}  // namespace trainscope
