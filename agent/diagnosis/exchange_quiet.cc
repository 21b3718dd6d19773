#include "diagnosis/exchange_quiet.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace trainscope::diagnosis {
namespace {

using Points = std::span<const PodPoint>;

// Bytes both ways the pod exchanged with the peers it had at both points
// (a peer that appeared or was forgotten between them counts nothing).
double ExchangedBetween(const PodPoint& a, const PodPoint& b) {
  double bytes = 0;
  auto ia = a.peers.begin();
  for (const auto& [peer, c] : b.peers) {
    while (ia != a.peers.end() && ia->first < peer) ++ia;
    if (ia == a.peers.end() || ia->first != peer) continue;
    bytes += std::max(0.0, c.receive_bytes - ia->second.receive_bytes) +
             std::max(0.0, c.transmit_bytes - ia->second.transmit_bytes);
  }
  return bytes;
}

std::vector<double> IntervalRates(Points points) {
  std::vector<double> rates;
  for (size_t i = 1; i < points.size(); ++i)
    rates.push_back(ExchangeRate(points[i - 1], points[i]));
  return rates;
}

double QuietLine(double reference) {
  return std::max(kQuietFloorBytesPerSecond, kQuietFraction * reference);
}

StateShares SharesOf(Points points) {
  StateShares s;
  for (const PodPoint& p : points) {
    if (!p.processes_running && !p.processes_sleeping &&
        !p.processes_disk_sleep && !p.processes_stopped && !p.processes_zombie)
      continue;
    auto has = [](const std::optional<double>& v) {
      return v.value_or(0) > 0 ? 1.0 : 0.0;
    };
    s.running += has(p.processes_running);
    s.sleeping += has(p.processes_sleeping);
    s.disk_sleep += has(p.processes_disk_sleep);
    s.stopped += has(p.processes_stopped);
    s.zombie += has(p.processes_zombie);
    const double alive =
        p.processes_running.value_or(0) + p.processes_sleeping.value_or(0) +
        p.processes_disk_sleep.value_or(0) + p.processes_stopped.value_or(0);
    s.none += alive > 0 ? 0.0 : 1.0;
    ++s.points;
  }
  if (s.points > 0) {
    const auto n = static_cast<double>(s.points);
    for (double* share : {&s.running, &s.sleeping, &s.disk_sleep, &s.stopped,
                          &s.zombie, &s.none})
      *share /= n;
  }
  return s;
}

std::optional<ProcessCounts> NewestCounts(Points points) {
  for (auto p = points.rbegin(); p != points.rend(); ++p) {
    if (!p->processes_running && !p->processes_sleeping &&
        !p->processes_disk_sleep && !p->processes_stopped &&
        !p->processes_zombie)
      continue;
    auto n = [](const std::optional<double>& v) {
      return static_cast<unsigned>(std::max(0.0, v.value_or(0)));
    };
    return ProcessCounts{n(p->processes_running), n(p->processes_sleeping),
                         n(p->processes_disk_sleep), n(p->processes_stopped),
                         n(p->processes_zombie)};
  }
  return std::nullopt;
}

}  // namespace

double ExchangeRate(const PodPoint& a, const PodPoint& b) {
  const double dt = b.t - a.t;
  if (dt <= 0 || a.instance != b.instance) return 0;
  return ExchangedBetween(a, b) / dt;
}

std::optional<QuietTail> QuietTailOf(Points points) {
  if (points.size() < 2) return std::nullopt;
  const std::vector<double> rates = IntervalRates(points);
  QuietTail q;
  q.reference_bytes_per_second = *std::max_element(rates.begin(), rates.end());
  const double line = QuietLine(q.reference_bytes_per_second);
  // Interval i runs from points[i] to points[i + 1].
  std::optional<size_t> last;
  std::optional<double> exchanged_until;
  for (size_t i = 0; i < rates.size(); ++i) {
    if (rates[i] < line) continue;
    if (exchanged_until && points[i].t > *exchanged_until) {
      q.last_run_s = points[i].t - *exchanged_until;
      q.last_run_end_t = points[i].t;
      q.longest_earlier_quiet_s =
          std::max(q.longest_earlier_quiet_s, q.last_run_s);
    }
    exchanged_until = points[i + 1].t;
    last = i;
  }
  q.anchored = last.has_value();
  // From the end of the last exchanging interval, else the whole range.
  const size_t from = last ? *last + 1 : 0;
  q.since_t = points[from].t;
  q.seconds = points.back().t - q.since_t;
  const Points tail = points.subspan(from);
  q.cpu_cores = CounterRate(tail, &PodPoint::cpu_usage_seconds);
  q.io_write_bytes_per_second = CounterRate(tail, &PodPoint::io_write_bytes);
  q.peer_rates = PeerRates(tail);
  q.states = SharesOf(tail.size() > 1 ? tail.subspan(1) : tail);
  q.newest_processes = NewestCounts(tail);
  return q;
}

bool StoppedRecently(const PodStats& pod, double min_quiet_s, double within_s) {
  if (!pod.quiet || !pod.quiet->anchored) return false;
  const QuietTail& q = *pod.quiet;
  if (q.seconds >= min_quiet_s) return true;
  return q.last_run_s >= min_quiet_s &&
         pod.newest_t - q.last_run_end_t <= within_s;
}

double StopLine(const PodStats& pod, double interval_s,
                const StallSettings& s) {
  if (!pod.steps_per_second || *pod.steps_per_second <= 0)
    return std::max(interval_s, 0.5 * s.min_stall_s);
  return std::max(interval_s, s.step_multiple / *pod.steps_per_second);
}

void ExchangeMemory::Observe(const Window& window) {
  for (auto it = pods_.begin(); it != pods_.end();)
    it = window.pods.count(it->first) ? std::next(it) : pods_.erase(it);
  for (const auto& [key, timeline] : window.pods) {
    const auto& pts = timeline.points;
    Entry& e = pods_[key];
    for (size_t i = 1; i < pts.size(); ++i) {
      if (pts[i].t <= e.seen_t) continue;
      const double rate = ExchangeRate(pts[i - 1], pts[i]);
      const double decay =
          std::exp2(-(pts[i].t - pts[i - 1].t) / kReferenceHalfLifeS);
      e.reference = std::max(rate, e.reference * decay);
      if (rate >= QuietLine(e.reference)) e.last_exchange_t = pts[i].t;
    }
    if (!pts.empty()) e.seen_t = std::max(e.seen_t, pts.back().t);
  }
}

std::optional<double> ExchangeMemory::LastExchange(
    const std::string& pod_key) const {
  auto it = pods_.find(pod_key);
  if (it == pods_.end()) return std::nullopt;
  return it->second.last_exchange_t;
}

void ExchangeMemory::Anchor(WindowStats& stats) const {
  for (auto& [key, pod] : stats.pods) {
    if (!pod.quiet || pod.quiet->anchored) continue;
    const auto last = LastExchange(key);
    if (!last || *last > pod.quiet->since_t) continue;
    pod.quiet->anchored = true;
    pod.quiet->seconds += pod.quiet->since_t - *last;
    pod.quiet->since_t = *last;
  }
}

}  // namespace trainscope::diagnosis
