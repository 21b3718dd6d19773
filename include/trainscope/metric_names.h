#pragma once

#include <string>
#include <string_view>

namespace trainscope {

// Metric names read by more than one component (the exporter writes them;
// the cluster view, recording rules and test suites outside the repository
// read them), defined once. lint.docs_names checks docs/metrics.md lists
// every one.

// Pod and container series share their names after these prefixes (the
// exporter writes both from one table): the constants below name the pod
// series, ContainerMetric() the container one.
inline constexpr std::string_view kPodMetricPrefix = "trainscope_pod_";
inline constexpr std::string_view kContainerMetricPrefix =
    "trainscope_container_";
// The container series of a pod series: trainscope_pod_X ->
// trainscope_container_X.
inline std::string ContainerMetric(std::string_view pod_metric) {
  return std::string(kContainerMetricPrefix) +
         std::string(pod_metric.substr(kPodMetricPrefix.size()));
}

// Per pod (and container): cgroup CPU, memory, IO, pressure.
inline constexpr std::string_view kPodCpuUsageSecondsTotal =
    "trainscope_pod_cpu_usage_seconds_total";
inline constexpr std::string_view kPodCpuPeriodsTotal =
    "trainscope_pod_cpu_periods_total";
inline constexpr std::string_view kPodCpuThrottledPeriodsTotal =
    "trainscope_pod_cpu_throttled_periods_total";
inline constexpr std::string_view kPodCpuLimitCores =
    "trainscope_pod_cpu_limit_cores";
inline constexpr std::string_view kPodMemoryWorkingSetBytes =
    "trainscope_pod_memory_working_set_bytes";
inline constexpr std::string_view kPodMemoryLimitBytes =
    "trainscope_pod_memory_limit_bytes";
inline constexpr std::string_view kPodOomEventsTotal =
    "trainscope_pod_oom_events_total";
inline constexpr std::string_view kPodIoReadBytesTotal =
    "trainscope_pod_io_read_bytes_total";
inline constexpr std::string_view kPodIoWriteBytesTotal =
    "trainscope_pod_io_write_bytes_total";
inline constexpr std::string_view kPodPressureWaitingSecondsTotal =
    "trainscope_pod_pressure_waiting_seconds_total";

// Per pod: its network interface, its identity, its GPUs, its shaping.
inline constexpr std::string_view kPodNetworkReceiveBytesTotal =
    "trainscope_pod_network_receive_bytes_total";
inline constexpr std::string_view kPodNetworkTransmitBytesTotal =
    "trainscope_pod_network_transmit_bytes_total";
inline constexpr std::string_view kPodInfo = "trainscope_pod_info";
inline constexpr std::string_view kPodGpuUtilizationRatio =
    "trainscope_pod_gpu_utilization_ratio";
// Per pod and GPU it holds: the GPU's Xid counter and latest Xid code (the
// device series with the pod's labels, as dcgm-exporter's
// DCGM_FI_DEV_XID_ERRORS carries them).
inline constexpr std::string_view kPodGpuXidErrorsTotal =
    "trainscope_pod_gpu_xid_errors_total";
inline constexpr std::string_view kPodGpuLastXid =
    "trainscope_pod_gpu_last_xid";
inline constexpr std::string_view kPodBandwidthLimitBytesPerSecond =
    "trainscope_pod_bandwidth_limit_bytes_per_second";

// Per pod: its processes by scheduler state (cgroup collector).
inline constexpr std::string_view kPodProcesses = "trainscope_pod_processes";

// Per pod and container: the kubelet's restarts, from the API's status.
inline constexpr std::string_view kPodRestartsTotal =
    "trainscope_pod_restarts_total";
inline constexpr std::string_view kContainerRestartsTotal =
    "trainscope_container_restarts_total";
inline constexpr std::string_view kContainerLastTerminatedTimestampSeconds =
    "trainscope_container_last_terminated_timestamp_seconds";
inline constexpr std::string_view kContainerStartedTimestampSeconds =
    "trainscope_container_started_timestamp_seconds";
inline constexpr std::string_view kContainerWaiting =
    "trainscope_container_waiting";

// Per pod and peer pod: bytes and the time spent exchanging.
inline constexpr std::string_view kPeerReceiveBytesTotal =
    "trainscope_peer_receive_bytes_total";
inline constexpr std::string_view kPeerTransmitBytesTotal =
    "trainscope_peer_transmit_bytes_total";
inline constexpr std::string_view kPeerReceiveExchangeSecondsTotal =
    "trainscope_peer_receive_exchange_seconds_total";
inline constexpr std::string_view kPeerTransmitExchangeSecondsTotal =
    "trainscope_peer_transmit_exchange_seconds_total";
inline constexpr std::string_view kPeerWaitSecondsTotal =
    "trainscope_peer_wait_seconds_total";

// Per worker: training steps per second from the period of its exchanges.
inline constexpr std::string_view kWorkerStepsPerSecond =
    "trainscope_worker_steps_per_second";

// Per node: CPUs and the uplink.
inline constexpr std::string_view kNodeCpus = "trainscope_node_cpus";
// The previous release's name of kNodeCpus, still read from older agents.
inline constexpr std::string_view kNodeCpuCountDeprecated =
    "trainscope_node_cpu_count";
inline constexpr std::string_view kNodeNetworkSpeedBytes =
    "trainscope_node_network_speed_bytes";
inline constexpr std::string_view kNodeNetworkReceiveBytesTotal =
    "trainscope_node_network_receive_bytes_total";
inline constexpr std::string_view kNodeNetworkTransmitBytesTotal =
    "trainscope_node_network_transmit_bytes_total";

// A node view's active diagnoses.
inline constexpr std::string_view kDiagnosisActive =
    "trainscope_diagnosis_active";

// Per training job with pods on this node: time by state, time lost by
// cause, goodput (diagnosis/goodput.h).
inline constexpr std::string_view kJobSecondsTotal =
    "trainscope_job_seconds_total";
inline constexpr std::string_view kJobLostSecondsTotal =
    "trainscope_job_lost_seconds_total";
inline constexpr std::string_view kJobGoodputRatio =
    "trainscope_job_goodput_ratio";

}  // namespace trainscope
