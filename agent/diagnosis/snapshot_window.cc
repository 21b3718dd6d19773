#include "diagnosis/snapshot_window.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <unordered_map>

#include "kube/quantity.h"
#include "trainscope/optional_value.h"

namespace trainscope::diagnosis {
namespace {

// The container that ended last (by finishedAt; without one, the first
// with a last termination at all).
const ContainerInfo* LastTerminated(const PodInfo& pod) {
  const ContainerInfo* last = nullptr;
  for (const auto& c : pod.containers) {
    if (!c.last_terminated) continue;
    if (last == nullptr ||
        c.last_terminated->finished_at_s.value_or(0) >
            last->last_terminated->finished_at_s.value_or(0)) {
      last = &c;
    }
  }
  return last;
}

// The API's restart state on the pod's point: the restarts summed over
// its containers (when the source reports them), and whether one of them
// waits in CrashLoopBackOff.
void AddRestartState(const PodInfo& pod, PodPoint& p) {
  double restarts = 0;
  bool known = false;
  for (const auto& c : pod.containers) {
    if (c.restart_count) {
      restarts += *c.restart_count;
      known = true;
    }
    if (c.waiting_reason == kCrashLoopBackOff) p.crash_looping = 1.0;
  }
  if (known) p.restarts = restarts;
}

PodMeta MetaOf(const PodInfo& pod, const std::string& node) {
  PodMeta m;
  m.namespace_name = pod.namespace_name;
  m.pod = pod.name;
  m.training_job = pod.training_job;
  m.role = pod.role;
  m.job_kind = pod.job_kind;
  m.framework = pod.framework;
  m.node = pod.node.empty() ? node : pod.node;
  m.spec_cpu_limit_cores = pod.spec_cpu_limit_cores;
  if (pod.spec_memory_limit_bytes) {
    m.spec_memory_limit_bytes =
        static_cast<double>(*pod.spec_memory_limit_bytes);
  }
  if (auto it = pod.annotations.find(std::string(kIngressBandwidthAnnotation));
      it != pod.annotations.end()) {
    m.ingress_limit_bytes_per_second = ParseBandwidthAnnotation(it->second);
  }
  if (auto it = pod.annotations.find(std::string(kEgressBandwidthAnnotation));
      it != pod.annotations.end()) {
    m.egress_limit_bytes_per_second = ParseBandwidthAnnotation(it->second);
  }
  for (const auto& c : pod.containers) {
    if (c.running_since_s && *c.running_since_s > m.running_since_s.value_or(0))
      m.running_since_s = c.running_since_s;
  }
  if (const ContainerInfo* c = LastTerminated(pod)) {
    m.last_termination = c->last_terminated;
    m.last_terminated_container = c->name;
  }
  return m;
}

PodPoint PointOf(double t, const PodSample& s) {
  const CgroupSample& c = s.cgroup;
  PodPoint p;
  p.t = t;
  p.instance = s.uid;
  p.cpu_usage_seconds = c.cpu.usage_seconds;
  p.cpu_periods = AsDouble(c.cpu.periods);
  p.cpu_throttled_periods = AsDouble(c.cpu.throttled_periods);
  p.cpu_limit_cores = c.cpu.limit_cores;
  p.memory_working_set_bytes = AsDouble(c.memory.working_set_bytes);
  p.memory_limit_bytes = AsDouble(c.memory.limit_bytes);
  p.oom_events = AsDouble(c.memory.oom_events);
  p.io_read_bytes = AsDouble(c.io.read_bytes);
  p.io_write_bytes = AsDouble(c.io.write_bytes);
  if (s.processes) {
    p.processes_running = s.processes->running;
    p.processes_sleeping = s.processes->sleeping;
    p.processes_disk_sleep = s.processes->disk_sleep;
    p.processes_stopped = s.processes->stopped;
    p.processes_zombie = s.processes->zombie;
  }
  p.io_pressure_some_seconds = c.io_pressure.some_seconds;
  p.memory_pressure_some_seconds = c.memory_pressure.some_seconds;
  p.cpu_pressure_some_seconds = c.cpu_pressure.some_seconds;
  if (s.network) {
    p.network_receive_bytes = static_cast<double>(s.network->receive_bytes);
    p.network_transmit_bytes = static_cast<double>(s.network->transmit_bytes);
  }
  return p;
}

// Per pod: the mean over its GPUs of the summed utilization of its
// containers' processes on each GPU (capped at 1 like the collector does).
void AddGpuUsage(const Snapshot& snap, std::map<std::string, PodPoint>& pts,
                 const std::unordered_map<std::string, std::string>& keys) {
  std::map<std::string, std::map<unsigned, double>> per_pod;
  for (const auto& u : snap.gpu_pods) {
    if (!u.utilization_ratio) continue;
    auto k = keys.find(u.pod_uid);
    if (k == keys.end()) continue;
    double& v = per_pod[k->second][u.gpu_index];
    v = std::min(1.0, v + *u.utilization_ratio);
  }
  for (auto& [key, gpus] : per_pod) {
    auto it = pts.find(key);
    if (it == pts.end() || gpus.empty()) continue;
    double sum = 0;
    for (const auto& [_, v] : gpus) sum += v;
    it->second.gpu_utilization_ratio = sum / static_cast<double>(gpus.size());
    it->second.gpus = static_cast<unsigned>(gpus.size());
  }
}

// Per pod: the Xid counter of each GPU one of its processes runs on. A GPU
// no pod uses, or one without the event API, gives no pod anything.
void AddGpuXids(const Snapshot& snap, std::map<std::string, PodPoint>& pts,
                const std::unordered_map<std::string, std::string>& keys) {
  for (const auto& u : snap.gpu_pods) {
    auto k = keys.find(u.pod_uid);
    if (k == keys.end()) continue;
    auto it = pts.find(k->second);
    if (it == pts.end()) continue;
    for (const auto& g : snap.gpus) {
      if (g.index != u.gpu_index || !g.xid_errors) continue;
      GpuXidPoint& x = it->second.gpu_xids[g.index];
      x.uuid = g.uuid;
      x.errors = static_cast<double>(*g.xid_errors);
      x.last_xid = AsDouble(g.last_xid);
    }
  }
}

// The PS of every job, from the node's pods and the peer pods of all nodes.
JobRoster RosterOf(const Snapshot& snap) {
  JobRoster roster;
  for (const auto* list : {snap.pods.get(), snap.peer_pods.get()}) {
    if (!list) continue;
    for (const auto& pod : *list) {
      if (pod.role != Role::kPs || pod.training_job.empty()) continue;
      roster[PodKey(pod.namespace_name, pod.training_job)].insert(pod.name);
    }
  }
  return roster;
}

double SecondsOf(const Snapshot& snap) {
  return std::chrono::duration<double>(snap.taken_at.time_since_epoch())
      .count();
}

// One snapshot's points appended to the window (newer than all it holds).
// `on_role` hears every peer role it records, with the snapshot's time.
template <typename OnRole>
void AppendSnapshot(const Snapshot& snap, const std::string& node, Window& w,
                    OnRole on_role) {
  const double t = SecondsOf(snap);
  std::unordered_map<std::string, std::string> keys;  // uid -> ns/pod
  std::unordered_map<std::string, const PodInfo*> infos;
  if (snap.pods) {
    for (const auto& pod : *snap.pods) {
      keys[pod.uid] = PodKey(pod.namespace_name, pod.name);
      infos[pod.uid] = &pod;
    }
  }
  std::map<std::string, PodPoint> points;
  for (const auto& [uid, sample] : snap.pod_samples) {
    auto info = infos.find(uid);
    if (info == infos.end()) continue;
    const std::string& key = keys[uid];
    points[key] = PointOf(t, sample);
    AddRestartState(*info->second, points[key]);
    // Newer snapshots overwrite: identity and limits as last known.
    w.pods[key].meta = MetaOf(*info->second, node);
  }
  for (const auto& pt : snap.peer_traffic) {
    auto k = keys.find(pt.pod_uid);
    if (k == keys.end() || pt.peer_pod.empty()) continue;
    auto p = points.find(k->second);
    if (p == points.end()) continue;
    const std::string peer = PodKey(pt.peer_namespace, pt.peer_pod);
    PeerCounters& c = p->second.peers[peer];
    c.receive_bytes += static_cast<double>(pt.receive_bytes);
    c.transmit_bytes += static_cast<double>(pt.transmit_bytes);
    c.exchange_seconds += pt.receive_exchange_seconds.value_or(0) +
                          pt.transmit_exchange_seconds.value_or(0);
    c.wait_seconds += pt.wait_seconds.value_or(0);
    if (pt.peer_role != Role::kUnknown) {
      w.peer_roles[peer] = pt.peer_role;
      on_role(peer, t);
    }
  }
  AddGpuUsage(snap, points, keys);
  AddGpuXids(snap, points, keys);
  for (const auto& r : snap.step_rates) {
    auto k = keys.find(r.pod_uid);
    if (k == keys.end() || !r.steps_per_second) continue;
    if (auto p = points.find(k->second); p != points.end())
      p->second.steps_per_second = r.steps_per_second;
  }
  for (auto& [key, p] : points) w.pods[key].points.push_back(std::move(p));
  w.job_ps = RosterOf(snap);

  NodeMeta meta;
  if (snap.node.cpu_count) meta.cpu_count = *snap.node.cpu_count;
  NodePoint np;
  np.t = t;
  for (const auto& nic : snap.node.nics) {
    np.receive_bytes += static_cast<double>(nic.counters.receive_bytes);
    np.transmit_bytes += static_cast<double>(nic.counters.transmit_bytes);
  }
  if (!snap.node.nics.empty()) w.node_points[node].push_back(np);
  for (const auto& nic : snap.node.nics) {
    if (nic.speed_bytes_per_second &&
        (!meta.nic_speed_bytes_per_second ||
         *nic.speed_bytes_per_second > *meta.nic_speed_bytes_per_second)) {
      meta.nic_speed_bytes_per_second = nic.speed_bytes_per_second;
    }
  }
  w.nodes[node] = meta;
}

}  // namespace

Window WindowFromSnapshots(
    const std::vector<std::shared_ptr<const Snapshot>>& snapshots,
    const std::string& node) {
  Window w;
  for (const auto& snap : snapshots) {
    if (snap) AppendSnapshot(*snap, node, w, [](const std::string&, double) {});
  }
  return w;
}

SlidingSnapshotWindow::SlidingSnapshotWindow(std::string node)
    : node_(std::move(node)) {}

const Window& SlidingSnapshotWindow::Update(
    const std::vector<std::shared_ptr<const Snapshot>>& history) {
  std::vector<const Snapshot*> snaps;
  for (const auto& s : history) {
    if (s) snaps.push_back(s.get());
  }
  // Sequences must rise through the history and not fall behind what was
  // seen; otherwise (a restarted sampler, hand-made snapshots) start over.
  bool slide = !snaps.empty() && snaps.back()->sequence >= last_sequence_;
  for (size_t i = 1; slide && i < snaps.size(); ++i) {
    slide = snaps[i - 1]->sequence < snaps[i]->sequence;
  }
  if (slide) {
    DropBefore(SecondsOf(*snaps.front()));
  } else {
    window_ = Window();
    peer_role_seen_.clear();
    last_sequence_ = 0;
  }
  for (const Snapshot* snap : snaps) {
    if (slide && snap->sequence <= last_sequence_) continue;
    AppendSnapshot(*snap, node_, window_,
                   [this](const std::string& peer, double t) {
                     peer_role_seen_[peer] = t;
                   });
  }
  if (!snaps.empty()) last_sequence_ = snaps.back()->sequence;
  return window_;
}

void SlidingSnapshotWindow::DropBefore(double t) {
  for (auto it = window_.pods.begin(); it != window_.pods.end();) {
    auto& points = it->second.points;
    points.erase(points.begin(),
                 std::find_if(points.begin(), points.end(),
                              [t](const PodPoint& p) { return p.t >= t; }));
    it = points.empty() ? window_.pods.erase(it) : std::next(it);
  }
  for (auto it = window_.node_points.begin();
       it != window_.node_points.end();) {
    auto& points = it->second;
    points.erase(points.begin(),
                 std::find_if(points.begin(), points.end(),
                              [t](const NodePoint& p) { return p.t >= t; }));
    it = points.empty() ? window_.node_points.erase(it) : std::next(it);
  }
  for (auto it = peer_role_seen_.begin(); it != peer_role_seen_.end();) {
    if (it->second >= t) {
      ++it;
      continue;
    }
    window_.peer_roles.erase(it->first);
    it = peer_role_seen_.erase(it);
  }
}

}  // namespace trainscope::diagnosis
