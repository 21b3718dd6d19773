#pragma once

#include <map>
#include <string>
#include <vector>

#include "diagnosis/window.h"

namespace trainscope::diagnosis::testing {

// Builds synthetic windows: every pod gets one point per instant
// (0, dt, 2dt, ...), counters grow at a set rate, gauges hold a value.
class WindowBuilder {
 public:
  explicit WindowBuilder(int points = 3, double dt = 5) {
    for (int i = 0; i < points; ++i) times_.push_back(i * dt);
  }

  WindowBuilder& Pod(const std::string& name, Role role,
                     const std::string& job = "ctr",
                     const std::string& ns = "training") {
    auto& t = window_.pods[PodKey(ns, name)];
    t.meta.namespace_name = ns;
    t.meta.pod = name;
    t.meta.training_job = job;
    t.meta.role = role;
    t.meta.node = "node-a";
    // The roster of the job's PS, as the snapshot's pod list gives it.
    if (role == Role::kPs) window_.job_ps[PodKey(ns, job)].insert(name);
    t.points.clear();
    for (double time : times_) {
      PodPoint p;
      p.t = time;
      p.instance = name + "-uid";
      t.points.push_back(p);
    }
    last_ = PodKey(ns, name);
    return *this;
  }
  PodMeta& Meta() { return window_.pods[last_].meta; }
  PodTimeline& Timeline() { return window_.pods[last_]; }

  // The last added pod's counter grows at `rate` per second from `base`.
  WindowBuilder& Counter(std::optional<double> PodPoint::*field, double rate,
                         double base = 1000) {
    for (auto& p : window_.pods[last_].points) p.*field = base + rate * p.t;
    return *this;
  }
  WindowBuilder& Gauge(std::optional<double> PodPoint::*field, double value) {
    for (auto& p : window_.pods[last_].points) p.*field = value;
    return *this;
  }
  // Bytes/s the last pod exchanges with `peer` ("ns/pod"), per direction.
  WindowBuilder& Peer(const std::string& peer, Role peer_role, double rx,
                      double tx) {
    for (auto& p : window_.pods[last_].points) {
      p.peers[peer] = {1e6 + rx * p.t, 2e6 + tx * p.t};
    }
    window_.peer_roles[peer] = peer_role;
    return *this;
  }
  // The last pod spends `share` of its time exchanging with `peer` (its
  // exchange bursts), on top of the bytes Peer() set.
  WindowBuilder& Exchange(const std::string& peer, double share) {
    for (auto& p : window_.pods[last_].points) {
      p.peers[peer].exchange_seconds = 100 + share * p.t;
    }
    return *this;
  }
  // The last pod waits on `peer`'s answers `share` of its time (from its
  // requests to the answers' ends).
  WindowBuilder& Wait(const std::string& peer, double share) {
    for (auto& p : window_.pods[last_].points) {
      p.peers[peer].wait_seconds = 50 + share * p.t;
    }
    return *this;
  }
  WindowBuilder& Gpu(double utilization, unsigned gpus = 1) {
    for (auto& p : window_.pods[last_].points) {
      p.gpu_utilization_ratio = utilization;
      p.gpus = gpus;
    }
    return *this;
  }
  WindowBuilder& Node(std::optional<double> cpus,
                      std::optional<double> nic_bytes_per_second) {
    window_.nodes["node-a"] = {cpus, nic_bytes_per_second};
    return *this;
  }
  // node-a's NICs carry these rates (bytes/s) at every instant.
  WindowBuilder& NodeTraffic(double rx, double tx) {
    auto& pts = window_.node_points["node-a"];
    pts.clear();
    for (double time : times_)
      pts.push_back({time, 5e9 + rx * time, 7e9 + tx * time});
    return *this;
  }
  // Removes the last pod's point at index i (a missed sample).
  WindowBuilder& DropPoint(size_t i) {
    auto& pts = window_.pods[last_].points;
    pts.erase(pts.begin() + static_cast<long>(i));
    return *this;
  }

  Window Build() const { return window_; }

 private:
  std::vector<double> times_;
  Window window_;
  std::string last_;
};

inline std::string Key(const std::string& pod) {
  return PodKey("training", pod);
}

}  // namespace trainscope::diagnosis::testing
