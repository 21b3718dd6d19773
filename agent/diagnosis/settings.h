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
  double critical_ratio = 0.5;
  // Fewer CFS periods than this in the window is too little to judge.
  double min_periods = 10;
};

struct NetworkSettings {
  double enter_ratio = 0.8;  // of capacity, per direction
  double exit_ratio = 0.7;
  double critical_ratio = 0.95;
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
  // The pod counts as active when it uses this much CPU (cores)...
  double active_cpu_cores = 0.1;
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
  // Samples per evaluation window (rates over window_samples - 1 intervals).
  size_t window_samples = 3;
};

}  // namespace trainscope::diagnosis
