#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/gpu_sample.h"
#include "trainscope/pod.h"
#include "trainscope/snapshot_parts.h"
#include "trainscope/status.h"

namespace trainscope {

// Cumulative counters are kept as the kernel reports them; rates are the
// reader's business. Every value is optional: a missing file leaves it empty
// rather than zero, so an exporter never invents a 0.
struct CpuSample {
  std::optional<double> usage_seconds;
  std::optional<uint64_t> periods;
  std::optional<uint64_t> throttled_periods;
  std::optional<double> throttled_seconds;
  std::optional<double> limit_cores;  // empty when unlimited
};

struct MemorySample {
  std::optional<uint64_t> usage_bytes;
  std::optional<uint64_t> working_set_bytes;
  std::optional<uint64_t> rss_bytes;
  std::optional<uint64_t> limit_bytes;  // empty when unlimited
  std::optional<uint64_t> oom_events;
};

struct IoSample {
  std::optional<uint64_t> read_bytes;
  std::optional<uint64_t> write_bytes;
};

// PSI totals of one resource, in seconds.
struct PressureSample {
  std::optional<double> some_seconds;
  std::optional<double> full_seconds;
};

struct CgroupSample {
  CpuSample cpu;
  MemorySample memory;
  IoSample io;
  PressureSample cpu_pressure;
  PressureSample memory_pressure;
  PressureSample io_pressure;
};

struct ContainerSample {
  std::string name;  // from the pod spec; the short runtime id when unknown
  std::string id;
  std::string cgroup_path;  // relative to the hierarchy root
  CgroupSample cgroup;
};

struct NetDevCounters {
  uint64_t receive_bytes = 0;
  uint64_t receive_packets = 0;
  uint64_t receive_errors = 0;
  uint64_t receive_drops = 0;
  uint64_t transmit_bytes = 0;
  uint64_t transmit_packets = 0;
  uint64_t transmit_errors = 0;
  uint64_t transmit_drops = 0;
};

// Scheduler states of a pod's processes (their main threads, or the thread
// a sleeping main thread waits on, from /proc/<pid>/stat and task/*/stat): a
// rank stopped by a signal, blocked on IO or spinning shows here while its
// traffic only says it went quiet.
struct ProcessStates {
  unsigned running = 0;     // R
  unsigned sleeping = 0;    // S, I
  unsigned disk_sleep = 0;  // D: uninterruptible, mostly IO
  unsigned stopped = 0;     // T, t: stopped by a signal or a tracer
  unsigned zombie = 0;      // Z, X: exited, not yet reaped

  bool operator==(const ProcessStates&) const = default;
};

struct PodSample {
  std::string uid;
  std::string cgroup_path;  // pod cgroup, relative to the hierarchy root
  CgroupSample cgroup;
  std::vector<ContainerSample> containers;
  // Host PIDs in the pod's cgroups (a bounded few; for procnet and GPU).
  std::vector<int> pids;
  // The states of the processes in `pids`; empty when none could be read.
  std::optional<ProcessStates> processes;
  bool host_network = false;
  // Sum over the pod's interfaces except lo; empty for hostNetwork pods.
  std::optional<NetDevCounters> network;
};

struct NicSample {
  std::string device;
  NetDevCounters counters;
  std::optional<double> speed_bytes_per_second;
};

struct NodeSample {
  std::optional<double> cpu_seconds_total;  // all modes but idle and iowait
  std::optional<double> cpu_idle_seconds_total;
  std::optional<unsigned> cpu_count;
  std::optional<uint64_t> memory_total_bytes;
  std::optional<uint64_t> memory_available_bytes;
  std::vector<NicSample> nics;
};

// Bytes one pod exchanged with one peer, as cumulative counters (the flows
// collector keeps them monotonic across BPF map evictions). Direction is the
// byte direction seen from `pod_uid`, whoever opened the connection.
struct PeerTrafficSample {
  std::string pod_uid;
  // Resolved peer; all empty when the address belongs to no known pod (all
  // unknown peers of a pod are aggregated into one sample).
  std::string peer_uid;
  std::string peer_namespace;
  std::string peer_pod;
  Role peer_role = Role::kUnknown;
  uint64_t receive_bytes = 0;
  uint64_t transmit_bytes = 0;
  uint64_t receive_packets = 0;
  uint64_t transmit_packets = 0;
  // Transport payload (IP and TCP/UDP headers removed): what iperf3 and
  // applications count. Empty when the source does not tell.
  std::optional<uint64_t> receive_payload_bytes;
  std::optional<uint64_t> transmit_payload_bytes;
  // Seconds spent in exchange bursts with the peer (first packet to last of
  // each burst, per direction). Empty when bursts are not tracked.
  std::optional<double> receive_exchange_seconds;
  std::optional<double> transmit_exchange_seconds;
  // Seconds the pod waited on the peer's answers: from the first byte of
  // each request it sent the peer to the last byte of the answer, silences
  // included, once however many connections waited at a time (flows
  // collector, ExchangeWaits). Empty when bursts are not tracked.
  std::optional<double> wait_seconds;
};

// A pod's training step rate, from the period at which its exchange bursts
// with its peers repeat (flows collector). Only pods whose exchanges with
// known pods were seen; `steps_per_second` is empty where they show no
// clear period.
struct StepRateSample {
  std::string pod_uid;
  std::optional<double> steps_per_second;
  unsigned streams = 0;       // (peer, direction) streams with a period
  unsigned streams_seen = 0;  // streams with recent bursts
};

struct CollectorRun {
  std::string name;
  CollectStatus status = CollectStatus::Ok();
  double duration_seconds = 0;
};

// Everything one sampling cycle produced. Immutable once published.
struct Snapshot {
  std::chrono::system_clock::time_point taken_at;
  uint64_t sequence = 0;
  std::shared_ptr<const PodList> pods;
  // Training pods of every node (the peer-pod watch; null when off): who
  // belongs to a job beyond this node. Never a source of pod series.
  std::shared_ptr<const PodList> peer_pods;
  std::map<std::string, PodSample> pod_samples;  // by pod UID
  NodeSample node;
  std::vector<GpuDeviceSample> gpus;
  std::vector<GpuPodUsage> gpu_pods;
  std::vector<PeerTrafficSample> peer_traffic;
  std::vector<StepRateSample> step_rates;
  // Each collector's own part, read by its section only (FlowsSample).
  SnapshotParts parts;
  std::vector<CollectorRun> collectors;
};

}  // namespace trainscope
