#include "flows/step_period.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <numbers>
#include <vector>

#include "flows/phase_sums.h"

namespace trainscope {
namespace {

std::vector<BurstPoint> BigBursts(std::span<const BurstPoint> bursts,
                                  double fraction) {
  std::vector<uint64_t> sizes;
  sizes.reserve(bursts.size());
  for (const BurstPoint& b : bursts) sizes.push_back(b.bytes);
  const size_t p90 = sizes.size() * 9 / 10;
  std::nth_element(sizes.begin(), sizes.begin() + p90, sizes.end());
  const double threshold = fraction * static_cast<double>(sizes[p90]);
  std::vector<BurstPoint> big;
  for (const BurstPoint& b : bursts)
    if (static_cast<double>(b.bytes) >= threshold) big.push_back(b);
  return big;
}

// The gaps between consecutive big bursts, grouped where they lie within 10%
// of each other, most frequent groups first: where the period hides.
std::vector<double> CandidatePeriods(const std::vector<BurstPoint>& big,
                                     size_t max_candidates) {
  std::vector<double> gaps;
  for (size_t i = 1; i < big.size(); ++i) {
    const double d = big[i].start_s - big[i - 1].start_s;
    if (d > 0) gaps.push_back(d);
  }
  std::sort(gaps.begin(), gaps.end());
  struct Group {
    double median;
    size_t count;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < gaps.size();) {
    size_t j = i;
    while (j < gaps.size() && gaps[j] <= gaps[i] * 1.1) ++j;
    groups.push_back({gaps[(i + j - 1) / 2], j - i});
    i = j;
  }
  std::stable_sort(
      groups.begin(), groups.end(),
      [](const Group& a, const Group& b) { return a.count > b.count; });
  std::vector<double> out;
  for (const Group& g : groups) {
    if (out.size() == max_candidates) break;
    out.push_back(g.median);
  }
  return out;
}

// floor() of a non-negative number well within int64, inline: the
// estimate takes it for every burst of every candidate period, and libm's
// floor and round were a tenth of its time.
double WholePart(double x) {
  return static_cast<double>(static_cast<int64_t>(x));
}

// Byte-weighted mean resultant length of the bursts' phases modulo `period`
// (`w`: their bytes, the same for every candidate period). Stops early,
// returning what it has, once the bursts left could no longer lift it to
// `at_least` even if all lined up: most candidate periods are rejected
// half-way. The phase is reduced to one turn in double precision, so
// float's sine and cosine keep their full precision.
double Alignment(const std::vector<BurstPoint>& big, double w, double period,
                 double at_least) {
  if (w <= 0) return 0;
  constexpr size_t kBlock = 32;
  float angles[kBlock], weights[kBlock];
  double x = 0, y = 0, left = w;
  const double t0 = big.front().start_s;
  for (size_t from = 0; from < big.size(); from += kBlock) {
    const size_t n = std::min(kBlock, big.size() - from);
    for (size_t i = 0; i < n; ++i) {
      const BurstPoint& b = big[from + i];
      const double turns = (b.start_s - t0) / period;
      angles[i] =
          static_cast<float>(2 * std::numbers::pi * (turns - WholePart(turns)));
      weights[i] = static_cast<float>(b.bytes);
      left -= static_cast<double>(b.bytes);
    }
    const PhaseSums sums = SumPhases({angles, n}, {weights, n});
    x += sums.cos;
    y += sums.sin;
    if (std::hypot(x, y) + left < at_least * w) break;
  }
  return std::hypot(x, y) / w;
}

// Least-squares fit of start = a + period * cycle. Cycles are counted gap by
// gap (each gap rounded to whole periods of `guess`), so a guess a few
// percent off does not drift over a long train, and a missing burst counts
// as the two cycles it spans.
// `t`: the big bursts' starts after the first's. One pass of sums: the
// estimate fits every candidate period of every window and scale.
PeriodEstimate Refine(const std::vector<double>& t, double guess) {
  const double n = static_cast<double>(t.size());
  const double per_guess = 1 / guess;
  double k = 0, sk = 0, st = 0, skk = 0, skt = 0, stt = 0;
  for (size_t i = 0; i < t.size(); ++i) {
    if (i > 0) k += WholePart((t[i] - t[i - 1]) * per_guess + 0.5);
    sk += k;
    st += t[i];
    skk += k * k;
    skt += k * t[i];
    stt += t[i] * t[i];
  }
  // Centred: the spread of the cycles, their covariance with the starts,
  // and the starts' spread.
  const double ckk = skk - sk * sk / n, ckt = skt - sk * st / n,
               ctt = stt - st * st / n;
  PeriodEstimate e;
  e.period_s = ckk > 0 ? ckt / ckk : guess;
  // The residuals' sum of squares of the least-squares line.
  const double ss = std::max(0.0, ctt - e.period_s * ckt);
  e.jitter = std::sqrt(ss / n) / e.period_s;
  e.cycles = static_cast<int>(k);
  e.bursts = t.size();
  return e;
}

double TotalBytes(std::span<const BurstPoint> bursts) {
  double bytes = 0;
  for (const BurstPoint& b : bursts) bytes += static_cast<double>(b.bytes);
  return bytes;
}

// The bytes of `bursts` that start within [from, to).
double BytesBetween(std::span<const BurstPoint> bursts, double from,
                    double to) {
  double bytes = 0;
  for (const BurstPoint& b : bursts)
    if (b.start_s >= from && b.start_s < to)
      bytes += static_cast<double>(b.bytes);
  return bytes;
}

// The steps in `bursts` from their bytes: the bytes of every burst between
// the first and the last big burst's start (with the small pieces of split
// exchanges when `bursts` holds them) over the bytes of one step. Empty
// under `min_steps`.
std::optional<PeriodEstimate> CountSteps(std::span<const BurstPoint> bursts,
                                         const std::vector<BurstPoint>& big,
                                         double step_bytes, int min_steps) {
  const double first = big.front().start_s, last = big.back().start_s;
  const double steps = BytesBetween(bursts, first, last) / step_bytes;
  const double span = last - first;
  if (span <= 0 || steps < min_steps) return std::nullopt;
  PeriodEstimate e;
  e.method = PeriodEstimate::Method::kVolume;
  e.period_s = span / steps;
  e.cycles = static_cast<int>(steps);
  e.bursts = big.size();
  return e;
}

}  // namespace

ModalSize DensestSize(std::span<const BurstPoint> bursts, double tolerance) {
  ModalSize m;
  if (bursts.empty()) return m;
  // The densest size: the most bursts within +-tolerance of one of them.
  std::vector<uint64_t> sizes;
  for (const BurstPoint& b : bursts) sizes.push_back(b.bytes);
  std::sort(sizes.begin(), sizes.end());
  size_t best_at = 0;
  for (size_t i = 0, j = 0; i < sizes.size(); ++i) {
    while (static_cast<double>(sizes[j]) <
           static_cast<double>(sizes[i]) * (1 - 2 * tolerance))
      ++j;
    if (i - j + 1 > m.count) m.count = i - j + 1, best_at = (i + j) / 2;
  }
  m.bytes = static_cast<double>(sizes[best_at]);
  double modal_bytes = 0, all_bytes = 0;
  for (uint64_t b : sizes) {
    all_bytes += static_cast<double>(b);
    if (std::abs(static_cast<double>(b) - m.bytes) <= tolerance * m.bytes)
      modal_bytes += static_cast<double>(b);
  }
  m.byte_share = all_bytes > 0 ? modal_bytes / all_bytes : 0;
  return m;
}

namespace {

// EstimatePeriod and EstimatePeriodByVolume with the big bursts of `bursts`
// already picked: EstimateAtScale tries both and sizes the exchange from
// the same ones.
std::optional<PeriodEstimate> CombOfBig(const std::vector<BurstPoint>& big,
                                        const PeriodSettings& s) {
  if (big.size() < 3) return std::nullopt;
  std::vector<double> starts(big.size());
  for (size_t i = 0; i < big.size(); ++i)
    starts[i] = big[i].start_s - big.front().start_s;
  std::vector<PeriodEstimate> fits;
  for (double candidate : CandidatePeriods(big, s.max_candidates)) {
    PeriodEstimate e = Refine(starts, candidate);
    if (e.period_s > 0 && e.cycles >= s.min_cycles) fits.push_back(e);
  }
  // The longest that aligns: the shorter ones need no alignment then.
  std::sort(fits.begin(), fits.end(),
            [](const PeriodEstimate& a, const PeriodEstimate& b) {
              return a.period_s > b.period_s;
            });
  const double n = static_cast<double>(big.size());
  const double bytes = TotalBytes(big);
  for (PeriodEstimate& e : fits) {
    e.alignment = Alignment(big, bytes, e.period_s, s.min_alignment);
    if (e.alignment >= s.min_alignment &&
        n * e.alignment * e.alignment >= s.min_rayleigh_z)
      return e;
  }
  return std::nullopt;
}

std::optional<PeriodEstimate> VolumeOfBig(std::span<const BurstPoint> bursts,
                                          const std::vector<BurstPoint>& big,
                                          const PeriodSettings& s) {
  if (big.size() < static_cast<size_t>(s.min_cycles) + 2) return std::nullopt;
  const ModalSize m = DensestSize(big, s.size_tolerance);
  const double modal = m.bytes;
  const double share =
      static_cast<double>(m.count) / static_cast<double>(big.size());
  if (modal <= 0 || share < s.min_modal_share ||
      m.byte_share < s.min_modal_share)
    return std::nullopt;
  auto e = CountSteps(bursts, big, modal, s.min_cycles);
  if (e) e->alignment = share;
  return e;
}

}  // namespace

std::optional<PeriodEstimate> EstimatePeriod(std::span<const BurstPoint> bursts,
                                             const PeriodSettings& s) {
  if (bursts.size() < 3) return std::nullopt;
  return CombOfBig(BigBursts(bursts, s.big_burst_fraction), s);
}

std::optional<PeriodEstimate> EstimatePeriodByVolume(
    std::span<const BurstPoint> bursts, const PeriodSettings& s) {
  if (bursts.size() < 3) return std::nullopt;
  return VolumeOfBig(bursts, BigBursts(bursts, s.big_burst_fraction), s);
}

std::optional<PeriodEstimate> EstimatePeriodByStepBytes(
    std::span<const BurstPoint> bursts, double step_bytes,
    const PeriodSettings& s) {
  if (bursts.size() < 3 || step_bytes <= 0) return std::nullopt;
  const std::vector<BurstPoint> big = BigBursts(bursts, s.big_burst_fraction);
  if (big.size() < 2) return std::nullopt;
  auto e = CountSteps(bursts, big, step_bytes, s.min_cycles);
  if (e) e->method = PeriodEstimate::Method::kStepBytes;
  return e;
}

std::vector<BurstPoint> MergeBursts(std::span<const BurstPoint> bursts,
                                    double gap_s) {
  // Sorted by start, a burst can only join the newest merged one: the
  // merged bursts are apart by more than the gap.
  std::vector<BurstPoint> merged;
  merged.reserve(bursts.size());
  for (BurstPoint b : bursts) {
    b.end_s = std::max(b.end_s, b.start_s);
    if (!merged.empty() && b.start_s <= merged.back().end_s + gap_s) {
      merged.back().end_s = std::max(merged.back().end_s, b.end_s);
      merged.back().bytes += b.bytes;
    } else {
      merged.push_back(b);
    }
  }
  return merged;
}

double AddToTrain(std::deque<BurstPoint>* train, const BurstPoint& burst,
                  double gap_s) {
  auto& t = *train;
  BurstPoint merged = burst;
  merged.end_s = std::max(merged.end_s, merged.start_s);
  // Pieces arrive nearly in order: search from the newest.
  auto first = t.end();
  while (first != t.begin() && std::prev(first)->start_s > merged.start_s)
    --first;
  // Earlier bursts that reach into this one (with the gap) join it.
  while (first != t.begin() &&
         std::prev(first)->end_s + gap_s >= merged.start_s)
    --first;
  auto last = first;
  double joined_span = 0;
  // The train's bursts are apart by more than the gap, so every one from
  // `first` that starts before the joined burst ends (with the gap) joins.
  while (last != t.end() && last->start_s <= merged.end_s + gap_s) {
    merged.start_s = std::min(merged.start_s, last->start_s);
    merged.end_s = std::max(merged.end_s, last->end_s);
    merged.bytes += last->bytes;
    joined_span += last->end_s - last->start_s;
    ++last;
  }
  const double added = (merged.end_s - merged.start_s) - joined_span;
  t.insert(t.erase(first, last), merged);
  return std::max(0.0, added);
}

std::optional<double> NaturalMergeGap(std::span<const BurstPoint> bursts,
                                      size_t min_long, double min_ratio) {
  std::vector<double> silences;
  for (size_t i = 1; i < bursts.size(); ++i) {
    const double end = std::max(bursts[i - 1].end_s, bursts[i - 1].start_s);
    // 1 ms floor: back-to-back pieces compare by ratio too.
    silences.push_back(std::max(1e-3, bursts[i].start_s - end));
  }
  std::sort(silences.begin(), silences.end());
  std::optional<double> gap;
  double best_ratio = min_ratio;
  for (size_t k = 0; k + 1 < silences.size(); ++k) {
    if (silences.size() - k - 1 < min_long) break;
    const double ratio = silences[k + 1] / silences[k];
    if (ratio >= best_ratio) {
      best_ratio = ratio;
      gap = std::sqrt(silences[k] * silences[k + 1]);
    }
  }
  return gap;
}

namespace {

// WholeExchangeBytes with the big bursts of `bursts` already picked. The
// size is the one among the big bursts: as many small ones (a request per
// step) would otherwise be as common as the exchanges.
std::optional<double> ExchangeSizeOfBig(std::span<const BurstPoint> bursts,
                                        const std::vector<BurstPoint>& big) {
  const ModalSize size = DensestSize(big, kWholeExchangeTolerance);
  const double share =
      size.byte_share * TotalBytes(big) / std::max(1.0, TotalBytes(bursts));
  if (share < kWholeExchangeByteShare) return std::nullopt;
  return size.bytes;
}

}  // namespace

std::optional<double> WholeExchangeBytes(std::span<const BurstPoint> bursts) {
  if (bursts.empty()) return std::nullopt;
  return ExchangeSizeOfBig(
      bursts, BigBursts(bursts, PeriodSettings{}.big_burst_fraction));
}

namespace {

// How many of a train's equal big bursts make one step: a step's exchange
// can come as equal pieces further apart than the merge gap (a 400 kB
// gradient pushed as two 200 kB bursts 55-70 ms apart, 0.7 s steps), one
// size as much as whole exchanges are. The comb tells: its period is the
// rhythm of the pieces' groups, and when it is at least 1.5 times the
// count's, round(ratio) bursts make a step. (The comb's period is never a
// multiple of a train of one burst per step: half its bursts would fall
// opposite.)
double PiecesPerStep(const PeriodEstimate& e, double counted_period_s) {
  if (e.method != PeriodEstimate::Method::kComb) return 1;
  const double ratio = e.period_s / counted_period_s;
  return ratio >= 1.5 ? std::round(ratio) : 1;
}

// One scale's estimate: the comb, else the volume; marked when the train
// is of whole exchanges. On a train of whole exchanges the comb only vouches
// for the regularity and the count of the exchanges gives the period: every
// big burst is a step there, while the comb's fit rounds a slow step (a gap
// of 1.5 periods and more, common on a contended node) to two cycles, as if
// a burst were missing, and overstates the rate (15-35% on simulated
// trains). Only the big bursts count: the small ones beside them each step
// (a request, another variable's few kB) are no part of a step's exchange,
// and counting their bytes as fractions of a step read real TF1 workers 5%
// high. The step's bytes remembered for later (step_bytes) are all of them.
std::optional<PeriodEstimate> EstimateAtScale(
    const std::vector<BurstPoint>& merged, const PeriodSettings& s) {
  if (merged.size() < 3) return std::nullopt;
  const std::vector<BurstPoint> big = BigBursts(merged, s.big_burst_fraction);
  auto e = CombOfBig(big, s);
  if (!e) e = VolumeOfBig(merged, big, s);
  if (!e) return e;
  const std::optional<double> exchange = ExchangeSizeOfBig(merged, big);
  e->whole_exchanges = exchange.has_value();
  if (!exchange) return e;
  if (auto counted = CountSteps(big, big, *exchange, s.min_cycles)) {
    const double pieces = PiecesPerStep(*e, counted->period_s);
    e->period_s = counted->period_s * pieces;
    e->cycles = static_cast<int>(counted->cycles / pieces);
    const double first = big.front().start_s, last = big.back().start_s;
    e->step_bytes =
        BytesBetween(merged, first, last) * e->period_s / (last - first);
  }
  return e;
}

}  // namespace

std::optional<PeriodEstimate> EstimatePeriodAtAnyScale(
    std::span<const BurstPoint> bursts, const PeriodSettings& s) {
  if (auto natural = NaturalMergeGap(bursts, s.min_cycles)) {
    if (auto e = EstimateAtScale(MergeBursts(bursts, *natural), s)) return e;
  }
  for (double gap : kMergeGaps) {
    if (auto e = EstimateAtScale(MergeBursts(bursts, gap), s)) return e;
  }
  return std::nullopt;
}

}  // namespace trainscope
