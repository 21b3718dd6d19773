#pragma once

#include <limits>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <vector>

#include "trainscope/pod.h"

namespace trainscope::diagnosis {

// The detectors' input model. Both the agent (from Snapshots) and the
// cluster view (from Prometheus series) translate into it, so the same
// detectors run on both. Pods and peers are keyed "namespace/pod" because
// that is all a peer series and a Prometheus series share.

struct PeerCounters {
  double receive_bytes = 0;
  double transmit_bytes = 0;
  // Time spent in exchange bursts with the peer, both directions (as a
  // rate: the fraction of the time the pod was exchanging with it).
  double exchange_seconds = 0;
  // Time spent waiting on the peer's answers, from each request's first
  // byte to the answer's last (as a rate, like exchange_seconds).
  double wait_seconds = 0;

  bool operator==(const PeerCounters&) const = default;
};

// The share of a quiet tail's points at which the pod had a process in each
// scheduler state (0..1).
struct StateShares {
  double running = 0;
  double sleeping = 0;
  double disk_sleep = 0;
  double stopped = 0;
  double zombie = 0;
  // Points with every state read as 0: no process left in the pod.
  double none = 0;
  size_t points = 0;  // tail points with states read
};

struct ProcessCounts {
  unsigned running = 0;
  unsigned sleeping = 0;
  unsigned disk_sleep = 0;
  unsigned stopped = 0;
  unsigned zombie = 0;
};

// How long a pod has gone without exchanging a step's worth with its peers
// (training_stalled), and what it did meanwhile.
struct QuietTail {
  // The end of its newest interval with an exchange above the quiet line.
  double since_t = 0;
  double seconds = 0;  // from since_t to the pod's newest point
  // Its fullest interval's exchange rate with its peers (bytes/s).
  double reference_bytes_per_second = 0;
  // False when no interval of the range exchanged above the line: the tail
  // is the whole range and since_t its start, unless the node view's
  // memory (ExchangeMemory) knows the last exchange from before the range.
  bool anchored = true;
  // The longest quiet run between two exchanging intervals before this one
  // (seconds): a job's natural pauses.
  double longest_earlier_quiet_s = 0;
  // The newest of those runs: how long, and when it ended.
  double last_run_s = 0;
  double last_run_end_t = 0;
  // Over the tail (empty or 0 with fewer than two points in it).
  std::optional<double> cpu_cores;
  std::optional<double> io_write_bytes_per_second;
  std::map<std::string, PeerCounters> peer_rates;
  StateShares states;
  // The newest tail point's process counts (empty when it had none read).
  std::optional<ProcessCounts> newest_processes;
};

// One GPU a pod holds, at one instant: the GPU's Xid counter (errors the
// driver reported since the agent began watching the GPU, whichever pod
// used it) and the code of its latest Xid.
struct GpuXidPoint {
  std::string uuid;  // empty where the source does not say
  double errors = 0;
  std::optional<double> last_xid;

  bool operator==(const GpuXidPoint&) const = default;
};

// One pod at one instant. Counters are cumulative as read; empty = not read.
struct PodPoint {
  double t = 0;  // seconds, any epoch shared by the whole window
  // The pod's incarnation (UID); a change means it restarted and its
  // counters started again.
  std::string instance;
  std::optional<double> cpu_usage_seconds;
  std::optional<double> cpu_periods;
  std::optional<double> cpu_throttled_periods;
  std::optional<double> cpu_limit_cores;  // gauge; empty = unlimited/unknown
  std::optional<double> memory_working_set_bytes;  // gauge
  std::optional<double> memory_limit_bytes;        // gauge
  std::optional<double> oom_events;
  std::optional<double> io_read_bytes;
  std::optional<double> io_write_bytes;
  std::optional<double> io_pressure_some_seconds;
  std::optional<double> memory_pressure_some_seconds;
  std::optional<double> cpu_pressure_some_seconds;
  std::optional<double> network_receive_bytes;
  std::optional<double> network_transmit_bytes;
  std::optional<double> gpu_utilization_ratio;  // gauge, mean over its GPUs
  unsigned gpus = 0;
  // The GPUs it holds whose Xid counter is read, by NVML index (gpu_error).
  std::map<unsigned, GpuXidPoint> gpu_xids;
  // Gauge: training steps per second from its exchange period (workers).
  std::optional<double> steps_per_second;
  // Counter: the kubelet's restarts of the pod's containers, summed.
  std::optional<double> restarts;
  // 1 while a container waits in CrashLoopBackOff (absent otherwise).
  std::optional<double> crash_looping;
  // Gauges: the pod's processes by scheduler state (trainscope_pod_processes).
  std::optional<double> processes_running;
  std::optional<double> processes_sleeping;
  std::optional<double> processes_disk_sleep;
  std::optional<double> processes_stopped;
  std::optional<double> processes_zombie;
  std::map<std::string, PeerCounters> peers;  // by "namespace/pod"

  bool operator==(const PodPoint&) const = default;
};

struct PodMeta {
  std::string namespace_name;
  std::string pod;
  std::string training_job;
  Role role = Role::kUnknown;
  JobKind job_kind = JobKind::kUnknown;
  Framework framework = Framework::kUnknown;
  std::string node;
  std::optional<double> spec_cpu_limit_cores;
  std::optional<double> spec_memory_limit_bytes;
  // kubernetes.io/ingress-bandwidth / egress-bandwidth, in bytes/s.
  std::optional<double> ingress_limit_bytes_per_second;
  std::optional<double> egress_limit_bytes_per_second;
  // The newest exit of any of its containers (the API's
  // lastState.terminated), and which container it was.
  std::optional<ContainerTermination> last_termination;
  std::string last_terminated_container;
  // The newest start of a running container (state.running.startedAt).
  std::optional<double> running_since_s;

  bool operator==(const PodMeta&) const = default;
};

struct NodeMeta {
  std::optional<double> cpu_count;
  // Fastest physical NIC (bytes/s); empty when no driver reports a speed.
  std::optional<double> nic_speed_bytes_per_second;

  bool operator==(const NodeMeta&) const = default;
};

// The node's physical NICs at one instant: cumulative bytes summed over the
// NICs. Pod counters include traffic to pods on the same node, which never
// touches the NIC; the node's own rate tells the two apart.
struct NodePoint {
  double t = 0;
  double receive_bytes = 0;
  double transmit_bytes = 0;

  bool operator==(const NodePoint&) const = default;
};

struct PodTimeline {
  PodMeta meta;
  std::vector<PodPoint> points;  // oldest first

  bool operator==(const PodTimeline&) const = default;
};

// "namespace/training_job" -> the names of the job's PS.
using JobRoster = std::map<std::string, std::set<std::string>>;

struct Window {
  std::map<std::string, PodTimeline> pods;  // by "namespace/pod"
  // Every PS of each job the pod lists know, on any node (the newest
  // lists): a PS that no local worker reached still counts towards the job.
  JobRoster job_ps;
  // Roles of peers (known pods or not): a remote PS is a PS.
  std::map<std::string, Role> peer_roles;
  std::map<std::string, NodeMeta> nodes;
  std::map<std::string, std::vector<NodePoint>> node_points;  // oldest first

  bool operator==(const Window&) const = default;
};

std::string PodKey(const std::string& namespace_name, const std::string& pod);

// The Xid errors of one GPU a pod held, over a range.
struct GpuXidStats {
  std::string uuid;
  double errors = 0;       // the counter's increase while the pod held the GPU
  double last_xid = 0;     // the code at the newest rise (0: not read)
  double last_rise_t = 0;  // the newest point whose counter rose
};

// Per GPU, the rises of its Xid counter from each point of the pod that
// holds it to the next that does (a pod whose process died with the fault
// holds it again once it restarts). A counter that went down (the driver
// reloaded, the agent restarted) starts again and counts nothing for that
// interval. GPUs whose counter never rose are left out.
std::map<unsigned, GpuXidStats> GpuXidRises(std::span<const PodPoint> points);

// Rates and levels of one pod over a window. Empty where the window holds
// fewer than two usable points of the input.
struct PodStats {
  PodMeta meta;
  double span_seconds = 0;
  std::optional<double> cpu_cores;
  std::optional<double> cpu_limit_cores;  // cgroup, else spec
  std::optional<double> node_cpu_count;
  std::optional<double> cpu_periods;  // increase over the window
  std::optional<double> throttled_ratio;
  std::optional<double> memory_working_set_bytes;  // mean
  std::optional<double> memory_limit_bytes;        // cgroup, else spec
  std::optional<double> oom_kills;                 // increase
  std::optional<double> io_read_bytes_per_second;
  std::optional<double> io_pressure_ratio;      // PSI some seconds / second
  std::optional<double> memory_pressure_ratio;  // PSI some seconds / second
  std::optional<double> cpu_pressure_ratio;     // PSI some seconds / second
  std::optional<double> receive_bytes_per_second;
  std::optional<double> transmit_bytes_per_second;
  // The pod's node: NIC speed and the NICs' own rates.
  std::optional<double> node_nic_speed_bytes_per_second;
  std::optional<double> node_receive_bytes_per_second;
  std::optional<double> node_transmit_bytes_per_second;
  std::optional<double> gpu_utilization_ratio;  // mean
  unsigned gpus = 0;
  // By NVML index: the GPUs it held whose Xid counter rose in the range.
  std::map<unsigned, GpuXidStats> gpu_xids;
  std::optional<double> steps_per_second;   // mean
  std::optional<double> restarts;           // last
  std::optional<double> restarts_increase;  // over the window
  bool crash_looping = false;               // at the newest instant
  double newest_t = 0;  // the newest instant of the pod's points
  // Since its last exchange of a step's worth with its peers
  // (exchange_quiet.h); empty when it never showed one in the range.
  std::optional<QuietTail> quiet;
  std::map<std::string, PeerCounters> peer_rates;  // bytes/s by peer
};

// One node's link over a window (the NICs the node collector counts).
struct NodeStats {
  std::optional<double> nic_speed_bytes_per_second;
  std::optional<double> receive_bytes_per_second;
  std::optional<double> transmit_bytes_per_second;
};

struct WindowStats {
  std::map<std::string, PodStats> pods;
  std::map<std::string, Role> peer_roles;
  std::map<std::string, NodeStats> nodes;  // by node name
  JobRoster job_ps;
};

// A pod's or peer's role ("namespace/pod"): the pod list's, else the peer
// table's; kUnknown when neither knows it.
Role PeerRole(const WindowStats& stats, const std::string& key);
// A peer of another job known locally is not a rank of `job`.
bool OfAnotherJob(const WindowStats& stats, const std::string& key,
                  const std::string& job);

// Per-second increase of a counter over the points: the sum of increases
// between consecutive usable points divided by the time they cover. An
// interval where the counter went down or the instance changed (reset,
// restart) counts neither bytes nor time, so a restart never produces a
// negative or inflated rate.
std::optional<double> CounterRate(std::span<const PodPoint> points,
                                  std::optional<double> PodPoint::*field);
// The same increase without dividing by time.
std::optional<double> CounterIncrease(std::span<const PodPoint> points,
                                      std::optional<double> PodPoint::*field);
std::optional<double> GaugeMean(std::span<const PodPoint> points,
                                std::optional<double> PodPoint::*field);
std::optional<double> GaugeLast(std::span<const PodPoint> points,
                                std::optional<double> PodPoint::*field);
// Every peer's rates over the points (bytes/s; exchange and wait seconds
// per second).
std::map<std::string, PeerCounters> PeerRates(std::span<const PodPoint> points);

// Instants from <= t <= to, both included.
struct TimeRange {
  double from = -std::numeric_limits<double>::infinity();
  double to = std::numeric_limits<double>::infinity();
};

// The stats of the points in `range` (default: all), read in place: the
// cluster view's replay evaluates 40 overlapping ranges of one window
// without copying it.
WindowStats ComputeStats(const Window& window, TimeRange range = {});

// Every distinct instant of the window, ascending.
std::vector<double> Instants(const Window& window);
// From the first of the last `count` instants of instants[0, end) that lie
// in `within`, to within.to; empty (from = to = +inf) when there is none.
TimeRange LastInstants(const std::vector<double>& instants, size_t end,
                       size_t count, TimeRange within);

// The last `count` instants of the window as a copy (tests, tools).
Window Tail(const Window& window, size_t count);

}  // namespace trainscope::diagnosis
