#pragma once

#include <cstddef>

namespace trainscope::diagnosis {

// Every threshold of every detector, with the default the docs describe
// (docs/diagnosis.md). Enter and exit thresholds differ on purpose: a value
// sitting on the line must not toggle a diagnosis.

struct EngineSettings {
  // Consecutive windows a condition must hold before the diagnosis enters.
  int enter_windows = 2;
  // Consecutive windows below the exit threshold before it clears.
  int exit_windows = 3;
};

struct HotPsSettings {
  // 2-4 PS: enter when share >= clamp(ratio_factor / n, min_share,
  // max_share); with 2 PS that is 0.75 (3:1), with 4 PS 0.5.
  double ratio_factor = 2.0;
  double min_share = 0.5;
  double max_share = 0.75;
  // Exit when the share falls below the enter threshold minus this margin.
  double exit_margin = 0.1;
  // From this many PS on, a robust z-score (median/MAD) is required too.
  size_t robust_from = 5;
  double z_enter = 3.5;
  double z_exit = 2.5;
  // MAD is floored at this fraction of the median so identical peers do not
  // make any tiny difference infinitely significant.
  double mad_floor_ratio = 0.1;
  // Below this much traffic on the hottest PS (bytes/s), skew is noise.
  double min_bytes_per_second = 100e3;
  // CPU dominance: the hot PS uses at least this much CPU (cores) while
  // every other PS of the job stays below idle_cores.
  double min_cpu_cores = 0.2;
  double idle_cores = 0.1;
};

struct PsCpuSettings {
  double enter_ratio = 0.9;  // of the CPU limit (or node cores if unlimited)
  double exit_ratio = 0.8;
};

struct StragglerSettings {
  size_t min_workers = 3;
  // Samples the exchange rates are taken over (30 s at the default 5 s
  // interval): a straggler is slow for a while, and over the 3-sample
  // evaluation window TCP flows sharing a full PS link take turns, so a
  // healthy worker can fall below half of its peers for a few seconds.
  size_t window_samples = 7;
  // Enter when the worker's PS exchange rate < enter_ratio x median of the
  // other workers; exit when it is back at or above exit_ratio x median.
  double enter_ratio = 0.5;
  double exit_ratio = 0.65;
  // Median below this (bytes/s): the job is idle, nobody straggles.
  double min_median_bytes_per_second = 100e3;
};

struct ThrottleSettings {
  double enter_ratio = 0.25;  // throttled periods / periods
  double exit_ratio = 0.15;
  // Fewer CFS periods than this in the window is too little to judge.
  double min_periods = 10;
};

struct NetworkSettings {
  double enter_ratio = 0.8;  // of capacity, per direction
  double exit_ratio = 0.7;
  // Pods named in a node-level finding, fullest first.
  size_t node_pods_listed = 5;
};

struct MemorySettings {
  double enter_ratio = 0.9;  // working set / limit
  double exit_ratio = 0.85;
  double critical_ratio = 0.97;
  // PSI memory "some": fraction of wall time some task stalled on memory.
  double psi_enter = 0.1;
  double psi_exit = 0.05;
};

struct InputIoSettings {
  // PSI io "some" fraction of wall time.
  double psi_enter = 0.2;
  double psi_exit = 0.1;
  // The PS exchange "drops": below this fraction of the job's other
  // workers' median, or of this worker's own rate over the long window.
  double drop_ratio = 0.75;
};

struct GpuSettings {
  double enter_utilization = 0.2;  // mean over the window
  double exit_utilization = 0.35;
  // The pod counts as active when it uses this much CPU (cores), has a step
  // rate, or exchanges with its peers at least this share of the time (a
  // worker waiting on its PS uses next to no CPU but keeps exchanging).
  double active_cpu_cores = 0.1;
  double active_exchange_share = 0.01;
};

// Comparing one rank (or synchronous worker) with its peers by the cause
// it shows: allreduce_straggler, and straggler_worker in synchronous PS
// jobs. The floors of throttling, IO and memory come from ThrottleSettings,
// InputIoSettings and MemorySettings so every detector means the same.
struct RankCauseSettings {
  // 2-4 ranks: the rank's value >= ratio_factor x the peers' median to
  // enter (hold_factor to hold), and above the cause's own floor.
  double ratio_factor = 2.0;
  double hold_factor = 1.5;
  // From this many ranks on, a robust z-score (median/MAD over all ranks)
  // is required too.
  size_t robust_from = 5;
  double z_enter = 3.5;
  double z_exit = 2.5;
  // MAD floors: a fraction of the median, and an absolute one, so identical
  // peers at 0 do not make a tiny value infinitely significant.
  double mad_floor_ratio = 0.1;
  double mad_floor_absolute = 0.02;
  // PSI cpu "some": fraction of wall time runnable tasks waited for a CPU.
  double cpu_stall_enter = 0.2;
  double cpu_stall_exit = 0.1;
  // CPU usage over the CPU limit: the rank uses all it may.
  double cpu_limit_use_enter = 0.9;
  double cpu_limit_use_exit = 0.8;
};

struct AllreduceLinkSettings {
  double enter_ratio = 0.8;  // of capacity, the fuller direction
  double exit_ratio = 0.7;
};

// straggler_worker by cause in PS jobs that train synchronously.
struct SyncPsSettings {
  // Every worker's PS exchange within this fraction of the workers' median:
  // the sign of synchronous training (all wait for the slowest, so all move
  // the same bytes per second).
  double similar_spread = 0.25;
  // Two workers at equal rates are as likely asynchronous at the same pace
  // (and one peer is too few to say a cause stands out): from three on.
  size_t min_workers = 3;
};

// The scaling forecast (headroom.h): a hot PS or a PS at its CPU limit that
// costs little now is a warning when its job's load cannot grow by this
// factor before the fullest resource is full (the job cannot add half its
// workers again and keep scaling).
struct HeadroomSettings {
  double warn_below_load_factor = 1.5;
};

// pod_restarting: a training pod whose container exited this recently (the
// API's lastState.terminated.finishedAt), or that the kubelet holds in
// CrashLoopBackOff. kube-prometheus' KubePodCrashLooping looks back 10 min
// too. Critical from this many restarts over the longer history.
struct PodRestartSettings {
  double recent_s = 600;
  double loop_restarts = 2;
};

// gpu_error: a GPU a training pod holds reported an Xid this recently (its
// Xid counter rose). Like pod_restarting's recent period: an Xid is an
// event, named for 10 minutes or while the history the detector sees
// (the agent's last samples, the cluster view's range) still holds it.
struct GpuErrorSettings {
  double recent_s = 600;
};

// training_stalled: a job whose ranks stopped exchanging steps while their
// pods run. The stall clock is the job's quiet time (exchange_quiet.h).
struct StallSettings {
  // Quiet this long, or step_multiple of the job's recent median step time
  // when longer (5 s steps are slow, not stalled), is a stall. DLRover's
  // xpu-timer waits 300 s and NCCL's watchdog 30 min; 10 s is 5 intervals
  // of nothing at 2 s and 2 at the default 5 s, which no healthy step
  // every 2 s or faster shows.
  double min_stall_s = 10;
  double step_multiple = 3;
  // A job whose natural pauses (quiet runs it came back from) were longer
  // gets this multiple of the longest one.
  double pause_multiple = 2;
  // A checkpoint (a rank writing at least checkpoint_bytes_per_second to
  // disk) or an evaluation (only the chief or evaluator computing, or every
  // rank computing) pauses the steps for a while: quiet this long first.
  double checkpoint_bytes_per_second = 1 << 20;
  double pause_grace_s = 600;
  // A rank computes at or above this many cores (or 80% of a smaller CPU
  // limit) in its quiet tail; it waits below idle_cores.
  double computing_cores = 0.5;
  double idle_cores = 0.1;
  // A process state held at this share of the tail's points counts.
  double state_share = 0.5;
  // After a stop, the ranks resume together and catch up (queues drain,
  // every rank wants CPU at once): stragglers are not judged on a pod that
  // stopped within this long.
  double resume_settle_s = 30;
  // A rank computes when its CPU stands out of the others' this many times
  // (at least 2 x idle_cores), even below computing_cores: a spinning rank
  // on a loaded node gets less than its limit.
  double stand_out_factor = 4;
  // Bytes/s a rank still sends a peer that answers nothing (TCP's
  // retransmissions back off to a few a minute).
  double unanswered_min_bytes_per_second = 1;
};

struct DiagnosisSettings {
  EngineSettings engine;
  HotPsSettings hot_ps;
  PsCpuSettings ps_cpu;
  StragglerSettings straggler;
  ThrottleSettings throttle;
  NetworkSettings network;
  MemorySettings memory;
  InputIoSettings input_io;
  GpuSettings gpu;
  RankCauseSettings rank_cause;
  AllreduceLinkSettings allreduce_link;
  SyncPsSettings sync_ps;
  HeadroomSettings headroom;
  PodRestartSettings restart;
  StallSettings stall;
  GpuErrorSettings gpu_error;
  // Samples per evaluation window (rates over window_samples - 1 intervals).
  size_t window_samples = 3;
};

}  // namespace trainscope::diagnosis
