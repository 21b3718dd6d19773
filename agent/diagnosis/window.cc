#include "diagnosis/window.h"

#include <algorithm>
#include <functional>
#include <set>

namespace trainscope::diagnosis {
namespace {

using Getter = std::function<std::optional<double>(const PodPoint&)>;

struct Increase {
  double amount = 0;
  double seconds = 0;
  bool any = false;
};

Increase SumIncreases(const std::vector<PodPoint>& points, const Getter& get) {
  Increase inc;
  const PodPoint* prev = nullptr;
  std::optional<double> prev_value;
  for (const auto& p : points) {
    std::optional<double> v = get(p);
    if (!v) continue;  // a missing value: bridge to the next usable point
    if (prev && prev->instance == p.instance && *v >= *prev_value &&
        p.t > prev->t) {
      inc.amount += *v - *prev_value;
      inc.seconds += p.t - prev->t;
      inc.any = true;
    }
    prev = &p;
    prev_value = v;
  }
  return inc;
}

std::optional<double> RateOf(const std::vector<PodPoint>& points,
                             const Getter& get) {
  Increase inc = SumIncreases(points, get);
  if (!inc.any || inc.seconds <= 0) return std::nullopt;
  return inc.amount / inc.seconds;
}

std::optional<double> Ratio(std::optional<double> num,
                            std::optional<double> den) {
  if (!num || !den || *den <= 0) return std::nullopt;
  return *num / *den;
}

std::optional<double> NodeRate(const std::vector<NodePoint>& points,
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

std::optional<double> CounterRate(const std::vector<PodPoint>& points,
                                  std::optional<double> PodPoint::*field) {
  return RateOf(points, [field](const PodPoint& p) { return p.*field; });
}

std::optional<double> CounterIncrease(const std::vector<PodPoint>& points,
                                      std::optional<double> PodPoint::*field) {
  Increase inc =
      SumIncreases(points, [field](const PodPoint& p) { return p.*field; });
  if (!inc.any) return std::nullopt;
  return inc.amount;
}

std::optional<double> GaugeMean(const std::vector<PodPoint>& points,
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

std::optional<double> GaugeLast(const std::vector<PodPoint>& points,
                                std::optional<double> PodPoint::*field) {
  for (auto it = points.rbegin(); it != points.rend(); ++it) {
    if ((*it).*field) return (*it).*field;
  }
  return std::nullopt;
}

WindowStats ComputeStats(const Window& window) {
  WindowStats stats;
  stats.peer_roles = window.peer_roles;
  stats.job_ps = window.job_ps;
  for (const auto& [key, timeline] : window.pods) {
    const auto& pts = timeline.points;
    PodStats s;
    s.meta = timeline.meta;
    if (pts.size() >= 2) s.span_seconds = pts.back().t - pts.front().t;
    NodeMeta node;
    if (auto it = window.nodes.find(s.meta.node); it != window.nodes.end()) {
      node = it->second;
    }
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
    s.cpu_pressure_ratio =
        CounterRate(pts, &PodPoint::cpu_pressure_some_seconds);
    s.receive_bytes_per_second =
        CounterRate(pts, &PodPoint::network_receive_bytes);
    s.transmit_bytes_per_second =
        CounterRate(pts, &PodPoint::network_transmit_bytes);
    s.node_nic_speed_bytes_per_second = node.nic_speed_bytes_per_second;
    if (auto np = window.node_points.find(s.meta.node);
        np != window.node_points.end()) {
      s.node_receive_bytes_per_second =
          NodeRate(np->second, &NodePoint::receive_bytes);
      s.node_transmit_bytes_per_second =
          NodeRate(np->second, &NodePoint::transmit_bytes);
    }
    s.gpu_utilization_ratio = GaugeMean(pts, &PodPoint::gpu_utilization_ratio);
    for (const auto& p : pts) s.gpus = std::max(s.gpus, p.gpus);

    std::set<std::string> peers;
    for (const auto& p : pts) {
      for (const auto& [peer, _] : p.peers) peers.insert(peer);
    }
    for (const auto& peer : peers) {
      auto field = [&peer](double PeerCounters::*f) {
        return [&peer, f](const PodPoint& p) -> std::optional<double> {
          auto it = p.peers.find(peer);
          if (it == p.peers.end()) return std::nullopt;
          return it->second.*f;
        };
      };
      auto rx = RateOf(pts, field(&PeerCounters::receive_bytes));
      auto tx = RateOf(pts, field(&PeerCounters::transmit_bytes));
      if (rx || tx) s.peer_rates[peer] = {rx.value_or(0), tx.value_or(0)};
    }
    stats.pods.emplace(key, std::move(s));
  }
  for (const auto& [name, meta] : window.nodes) {
    NodeStats& n = stats.nodes[name];
    n.nic_speed_bytes_per_second = meta.nic_speed_bytes_per_second;
    if (auto np = window.node_points.find(name);
        np != window.node_points.end()) {
      n.receive_bytes_per_second =
          NodeRate(np->second, &NodePoint::receive_bytes);
      n.transmit_bytes_per_second =
          NodeRate(np->second, &NodePoint::transmit_bytes);
    }
  }
  return stats;
}

Window Tail(const Window& window, size_t count) {
  std::set<double> times;
  for (const auto& [_, timeline] : window.pods) {
    for (const auto& p : timeline.points) times.insert(p.t);
  }
  Window out;
  out.peer_roles = window.peer_roles;
  out.nodes = window.nodes;
  out.job_ps = window.job_ps;
  if (times.empty() || count == 0) return out;
  auto cut_it = times.end();
  for (size_t i = 0; i < count && cut_it != times.begin(); ++i) --cut_it;
  const double cut = *cut_it;
  for (const auto& [key, timeline] : window.pods) {
    PodTimeline t;
    t.meta = timeline.meta;
    for (const auto& p : timeline.points) {
      if (p.t >= cut) t.points.push_back(p);
    }
    if (!t.points.empty()) out.pods.emplace(key, std::move(t));
  }
  for (const auto& [node, points] : window.node_points) {
    for (const auto& p : points) {
      if (p.t >= cut) out.node_points[node].push_back(p);
    }
  }
  return out;
}

}  // namespace trainscope::diagnosis
