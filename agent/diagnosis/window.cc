#include "diagnosis/window.h"

#include <algorithm>
#include <limits>
#include <set>
#include <span>
#include <string_view>

#include "diagnosis/exchange_quiet.h"

namespace trainscope::diagnosis {
namespace {

using Points = std::span<const PodPoint>;

struct Increase {
  double amount = 0;
  double seconds = 0;
  bool any = false;
};

// One counter followed point by point: a missing value bridges to the next
// usable point; a decrease or a new instance (reset, restart) counts neither
// bytes nor time.
class IncreaseTracker {
 public:
  void Add(const PodPoint& p, double value) {
    if (prev_ && prev_->instance == p.instance && value >= prev_value_ &&
        p.t > prev_->t) {
      inc_.amount += value - prev_value_;
      inc_.seconds += p.t - prev_->t;
      inc_.any = true;
    }
    prev_ = &p;
    prev_value_ = value;
  }
  const Increase& increase() const { return inc_; }

 private:
  Increase inc_;
  const PodPoint* prev_ = nullptr;
  double prev_value_ = 0;
};

Increase SumIncreases(Points points, std::optional<double> PodPoint::*field) {
  IncreaseTracker tracker;
  for (const auto& p : points) {
    if (const auto& v = p.*field) tracker.Add(p, *v);
  }
  return tracker.increase();
}

std::optional<double> RateOf(const Increase& inc) {
  if (!inc.any || inc.seconds <= 0) return std::nullopt;
  return inc.amount / inc.seconds;
}

}  // namespace

// One pass over the points. A PS has a peer per worker and its peer set
// rarely changes between points, so each point's (sorted) peers are merged
// into a sorted list: one comparison per point and peer instead of a tree
// lookup.
std::map<std::string, PeerCounters> PeerRates(Points points) {
  struct Trackers {
    std::string_view peer;
    IncreaseTracker receive, transmit, exchange, wait;
  };
  std::vector<Trackers> by_peer;
  for (const auto& p : points) {
    size_t i = 0;
    for (const auto& [peer, c] : p.peers) {
      int order = -1;
      while (i < by_peer.size() &&
             (order = by_peer[i].peer.compare(peer)) < 0) {
        ++i;
      }
      if (i == by_peer.size() || order != 0) {
        by_peer.insert(by_peer.begin() + static_cast<std::ptrdiff_t>(i),
                       Trackers{peer, {}, {}, {}, {}});
      }
      by_peer[i].receive.Add(p, c.receive_bytes);
      by_peer[i].transmit.Add(p, c.transmit_bytes);
      by_peer[i].exchange.Add(p, c.exchange_seconds);
      by_peer[i].wait.Add(p, c.wait_seconds);
      ++i;
    }
  }
  std::map<std::string, PeerCounters> rates;
  for (const auto& t : by_peer) {
    auto rx = RateOf(t.receive.increase());
    auto tx = RateOf(t.transmit.increase());
    auto busy = RateOf(t.exchange.increase());
    auto wait = RateOf(t.wait.increase());
    if (rx || tx) {
      rates.emplace_hint(rates.end(), std::string(t.peer),
                         PeerCounters{rx.value_or(0), tx.value_or(0),
                                      busy.value_or(0), wait.value_or(0)});
    }
  }
  return rates;
}

namespace {

// The points with range.from <= t <= range.to (points are oldest first).
template <typename T>
std::span<const T> InRange(const std::vector<T>& points, TimeRange range) {
  auto first = std::lower_bound(points.begin(), points.end(), range.from,
                                [](const T& p, double t) { return p.t < t; });
  auto last = std::upper_bound(first, points.end(), range.to,
                               [](double t, const T& p) { return t < p.t; });
  return {first, last};
}

std::optional<double> Ratio(std::optional<double> num,
                            std::optional<double> den) {
  if (!num || !den || *den <= 0) return std::nullopt;
  return *num / *den;
}

std::optional<double> NodeRate(std::span<const NodePoint> points,
                               double NodePoint::*field) {
  double amount = 0, seconds = 0;
  for (size_t i = 1; i < points.size(); ++i) {
    const double delta = points[i].*field - points[i - 1].*field;
    const double dt = points[i].t - points[i - 1].t;
    if (delta < 0 || dt <= 0) continue;  // counter reset
    amount += delta;
    seconds += dt;
  }
  if (seconds <= 0) return std::nullopt;
  return amount / seconds;
}

}  // namespace

std::string PodKey(const std::string& namespace_name, const std::string& pod) {
  return namespace_name + "/" + pod;
}

std::optional<double> CounterRate(std::span<const PodPoint> points,
                                  std::optional<double> PodPoint::*field) {
  return RateOf(SumIncreases(points, field));
}

std::optional<double> CounterIncrease(std::span<const PodPoint> points,
                                      std::optional<double> PodPoint::*field) {
  Increase inc = SumIncreases(points, field);
  if (!inc.any) return std::nullopt;
  return inc.amount;
}

std::map<unsigned, GpuXidStats> GpuXidRises(std::span<const PodPoint> points) {
  std::map<unsigned, GpuXidStats> rises;
  std::map<unsigned, const GpuXidPoint*> previous;  // per GPU, its last point
  for (const auto& p : points) {
    for (const auto& [gpu, now] : p.gpu_xids) {
      const GpuXidPoint*& before = previous[gpu];
      if (before != nullptr && now.errors > before->errors) {
        GpuXidStats& r = rises[gpu];
        r.uuid = now.uuid;
        r.errors += now.errors - before->errors;
        r.last_xid = now.last_xid.value_or(0);
        r.last_rise_t = p.t;
      }
      before = &now;
    }
  }
  return rises;
}

std::optional<double> GaugeMean(std::span<const PodPoint> points,
                                std::optional<double> PodPoint::*field) {
  double sum = 0;
  int n = 0;
  for (const auto& p : points) {
    if (p.*field) {
      sum += *(p.*field);
      ++n;
    }
  }
  if (n == 0) return std::nullopt;
  return sum / n;
}

std::optional<double> GaugeLast(std::span<const PodPoint> points,
                                std::optional<double> PodPoint::*field) {
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if ((*it).*field) return (*it).*field;
  }
  return std::nullopt;
}

namespace {

PodStats StatsOfPod(const PodTimeline& timeline, Points pts,
                    const NodeMeta& node, std::span<const NodePoint> nics) {
  PodStats s;
  s.meta = timeline.meta;
  if (pts.size() >= 2) s.span_seconds = pts.back().t - pts.front().t;
  s.node_cpu_count = node.cpu_count;
  s.cpu_cores = CounterRate(pts, &PodPoint::cpu_usage_seconds);
  s.cpu_limit_cores = GaugeLast(pts, &PodPoint::cpu_limit_cores);
  if (!s.cpu_limit_cores) s.cpu_limit_cores = s.meta.spec_cpu_limit_cores;
  s.cpu_periods = CounterIncrease(pts, &PodPoint::cpu_periods);
  s.throttled_ratio = Ratio(
      CounterIncrease(pts, &PodPoint::cpu_throttled_periods), s.cpu_periods);
  s.memory_working_set_bytes =
      GaugeMean(pts, &PodPoint::memory_working_set_bytes);
  s.memory_limit_bytes = GaugeLast(pts, &PodPoint::memory_limit_bytes);
  if (!s.memory_limit_bytes) {
    s.memory_limit_bytes = s.meta.spec_memory_limit_bytes;
  }
  s.oom_kills = CounterIncrease(pts, &PodPoint::oom_events);
  s.io_read_bytes_per_second = CounterRate(pts, &PodPoint::io_read_bytes);
  s.io_pressure_ratio = CounterRate(pts, &PodPoint::io_pressure_some_seconds);
  s.memory_pressure_ratio =
      CounterRate(pts, &PodPoint::memory_pressure_some_seconds);
  s.cpu_pressure_ratio = CounterRate(pts, &PodPoint::cpu_pressure_some_seconds);
  s.receive_bytes_per_second =
      CounterRate(pts, &PodPoint::network_receive_bytes);
  s.transmit_bytes_per_second =
      CounterRate(pts, &PodPoint::network_transmit_bytes);
  s.node_nic_speed_bytes_per_second = node.nic_speed_bytes_per_second;
  if (!nics.empty()) {
    s.node_receive_bytes_per_second = NodeRate(nics, &NodePoint::receive_bytes);
    s.node_transmit_bytes_per_second =
        NodeRate(nics, &NodePoint::transmit_bytes);
  }
  s.gpu_utilization_ratio = GaugeMean(pts, &PodPoint::gpu_utilization_ratio);
  s.gpu_xids = GpuXidRises(pts);
  s.steps_per_second = GaugeMean(pts, &PodPoint::steps_per_second);
  s.restarts = GaugeLast(pts, &PodPoint::restarts);
  s.restarts_increase = CounterIncrease(pts, &PodPoint::restarts);
  if (!pts.empty()) {
    s.newest_t = pts.back().t;
    s.crash_looping = pts.back().crash_looping.has_value();
  }
  for (const auto& p : pts) s.gpus = std::max(s.gpus, p.gpus);
  s.peer_rates = PeerRates(pts);
  s.quiet = QuietTailOf(pts);
  return s;
}

}  // namespace

Role PeerRole(const WindowStats& stats, const std::string& key) {
  if (auto it = stats.pods.find(key); it != stats.pods.end())
    return it->second.meta.role;
  if (auto it = stats.peer_roles.find(key); it != stats.peer_roles.end())
    return it->second;
  return Role::kUnknown;
}

bool OfAnotherJob(const WindowStats& stats, const std::string& key,
                  const std::string& job) {
  auto it = stats.pods.find(key);
  return it != stats.pods.end() && !it->second.meta.training_job.empty() &&
         it->second.meta.training_job != job;
}

WindowStats ComputeStats(const Window& window, TimeRange range) {
  WindowStats stats;
  stats.peer_roles = window.peer_roles;
  stats.job_ps = window.job_ps;
  std::map<std::string_view, std::span<const NodePoint>> nics;
  for (const auto& [node, points] : window.node_points) {
    nics.emplace(node, InRange(points, range));
  }
  static const NodeMeta kNoNode;
  for (const auto& [key, timeline] : window.pods) {
    const Points pts = InRange(timeline.points, range);
    // A pod known without any point (meta only) still counts; one with
    // points, none in the range, is not in this range.
    if (pts.empty() && !timeline.points.empty()) continue;
    auto node = window.nodes.find(timeline.meta.node);
    auto nic = nics.find(timeline.meta.node);
    stats.pods.emplace_hint(
        stats.pods.end(), key,
        StatsOfPod(
            timeline, pts, node != window.nodes.end() ? node->second : kNoNode,
            nic != nics.end() ? nic->second : std::span<const NodePoint>()));
  }
  for (const auto& [name, meta] : window.nodes) {
    NodeStats& n = stats.nodes[name];
    n.nic_speed_bytes_per_second = meta.nic_speed_bytes_per_second;
    if (auto nic = nics.find(name); nic != nics.end()) {
      n.receive_bytes_per_second =
          NodeRate(nic->second, &NodePoint::receive_bytes);
      n.transmit_bytes_per_second =
          NodeRate(nic->second, &NodePoint::transmit_bytes);
    }
  }
  return stats;
}

std::vector<double> Instants(const Window& window) {
  std::set<double> times;
  for (const auto& [_, timeline] : window.pods) {
    for (const auto& p : timeline.points) times.insert(p.t);
  }
  return {times.begin(), times.end()};
}

TimeRange LastInstants(const std::vector<double>& instants, size_t end,
                       size_t count, TimeRange within) {
  // The first of the last `count` instants before `end` inside `within`.
  const size_t in_range = static_cast<size_t>(
      std::lower_bound(instants.begin(), instants.begin() + end, within.from) -
      instants.begin());
  const size_t first = std::max(end > count ? end - count : 0, in_range);
  if (count == 0 || first >= end) {
    return {std::numeric_limits<double>::infinity(),
            std::numeric_limits<double>::infinity()};
  }
  return {instants[first], within.to};
}

Window Tail(const Window& window, size_t count) {
  const std::vector<double> instants = Instants(window);
  const TimeRange range =
      LastInstants(instants, instants.size(), count, TimeRange{});
  Window out;
  out.peer_roles = window.peer_roles;
  out.nodes = window.nodes;
  out.job_ps = window.job_ps;
  for (const auto& [key, timeline] : window.pods) {
    const Points pts = InRange(timeline.points, range);
    if (pts.empty()) continue;
    PodTimeline t;
    t.meta = timeline.meta;
    t.points.assign(pts.begin(), pts.end());
    out.pods.emplace(key, std::move(t));
  }
  for (const auto& [node, points] : window.node_points) {
    auto in = InRange(points, range);
    if (!in.empty()) out.node_points[node].assign(in.begin(), in.end());
  }
  return out;
}

}  // namespace trainscope::diagnosis
