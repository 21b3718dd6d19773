#include "cgroup/pod_families.h"

#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "trainscope/metric_names.h"

namespace trainscope {
namespace {

using prometheus::MetricType;

struct CgroupSeries {
  LabelMap labels;
  const CgroupSample* sample;
};

// One metric of a cgroup sample: its pod series' name (the container
// series' is ContainerMetric of it), type, help and getter.
struct CgroupMetric {
  std::string_view pod_name;
  MetricType type;
  const char* help;
  std::function<std::optional<double>(const CgroupSample&)> get;
};

const std::vector<CgroupMetric>& CgroupMetrics() {
  static const std::vector<CgroupMetric> metrics = {
      {kPodCpuUsageSecondsTotal, MetricType::Counter,
       "CPU time consumed, in seconds.",
       [](const CgroupSample& s) { return s.cpu.usage_seconds; }},
      {kPodCpuPeriodsTotal, MetricType::Counter,
       "CFS enforcement periods elapsed.",
       [](const CgroupSample& s) { return AsDouble(s.cpu.periods); }},
      {kPodCpuThrottledPeriodsTotal, MetricType::Counter,
       "CFS periods in which the cgroup was throttled.",
       [](const CgroupSample& s) { return AsDouble(s.cpu.throttled_periods); }},
      {"trainscope_pod_cpu_throttled_seconds_total", MetricType::Counter,
       "Time the cgroup was throttled by its CPU limit, in seconds.",
       [](const CgroupSample& s) { return s.cpu.throttled_seconds; }},
      {kPodCpuLimitCores, MetricType::Gauge,
       "CPU limit (CFS quota / period) in cores; absent when unlimited.",
       [](const CgroupSample& s) { return s.cpu.limit_cores; }},
      {"trainscope_pod_memory_usage_bytes", MetricType::Gauge,
       "Memory charged to the cgroup, page cache included, in bytes.",
       [](const CgroupSample& s) { return AsDouble(s.memory.usage_bytes); }},
      {kPodMemoryWorkingSetBytes, MetricType::Gauge,
       "Memory usage minus inactive file cache (what the OOM killer and the "
       "kubelet look at), in bytes.",
       [](const CgroupSample& s) {
         return AsDouble(s.memory.working_set_bytes);
       }},
      {"trainscope_pod_memory_rss_bytes", MetricType::Gauge,
       "Anonymous memory (RSS), in bytes.",
       [](const CgroupSample& s) { return AsDouble(s.memory.rss_bytes); }},
      {kPodMemoryLimitBytes, MetricType::Gauge,
       "Memory limit in bytes; absent when unlimited.",
       [](const CgroupSample& s) { return AsDouble(s.memory.limit_bytes); }},
      {kPodOomEventsTotal, MetricType::Counter,
       "Processes killed by the OOM killer inside the cgroup.",
       [](const CgroupSample& s) { return AsDouble(s.memory.oom_events); }},
      {kPodIoReadBytesTotal, MetricType::Counter,
       "Bytes read from block devices.",
       [](const CgroupSample& s) { return AsDouble(s.io.read_bytes); }},
      {kPodIoWriteBytesTotal, MetricType::Counter,
       "Bytes written to block devices.",
       [](const CgroupSample& s) { return AsDouble(s.io.write_bytes); }},
  };
  return metrics;
}

// Pod series, or (`containers`) the same metrics per container.
void AppendCgroupFamilies(bool containers,
                          const std::vector<CgroupSeries>& series,
                          std::vector<prometheus::MetricFamily>& out) {
  const char* scope = containers ? "container" : "pod";
  auto name = [containers](std::string_view pod_name) {
    return containers ? ContainerMetric(pod_name) : std::string(pod_name);
  };
  for (const auto& metric : CgroupMetrics()) {
    FamilyBuilder family(name(metric.pod_name),
                         std::string(metric.help) + " Per " + scope + ".",
                         metric.type);
    for (const auto& s : series) family.Add(s.labels, metric.get(*s.sample));
    family.MoveInto(out);
  }
  // PSI, named as cAdvisor does: "waiting" is PSI some, "stalled" PSI full.
  FamilyBuilder waiting(name(kPodPressureWaitingSecondsTotal),
                        "Time at least one task waited for the resource "
                        "(PSI some), in seconds. Per " +
                            std::string(scope) + ".",
                        MetricType::Counter);
  FamilyBuilder stalled(name("trainscope_pod_pressure_stalled_seconds_total"),
                        "Time all non-idle tasks stalled on the resource "
                        "(PSI full), in seconds. Per " +
                            std::string(scope) + ".",
                        MetricType::Counter);
  for (const auto& s : series) {
    const std::pair<const char*, const PressureSample*> resources[] = {
        {"cpu", &s.sample->cpu_pressure},
        {"memory", &s.sample->memory_pressure},
        {"io", &s.sample->io_pressure}};
    for (const auto& [resource, psi] : resources) {
      auto labels = WithLabels(s.labels, {{"resource", resource}});
      waiting.Add(labels, psi->some_seconds);
      stalled.Add(labels, psi->full_seconds);
    }
  }
  waiting.MoveInto(out);
  stalled.MoveInto(out);
}

struct NetMetric {
  std::string_view name;
  const char* help;
  uint64_t NetDevCounters::*field;
};

void AppendNetworkFamilies(
    const std::vector<std::pair<LabelMap, const NetDevCounters*>>& pods,
    std::vector<prometheus::MetricFamily>& out) {
  static const NetMetric metrics[] = {
      {kPodNetworkReceiveBytesTotal,
       "Bytes received on the pod's interfaces (lo excluded).",
       &NetDevCounters::receive_bytes},
      {kPodNetworkTransmitBytesTotal,
       "Bytes sent on the pod's interfaces (lo excluded).",
       &NetDevCounters::transmit_bytes},
      {"trainscope_pod_network_receive_packets_total",
       "Packets received on the pod's interfaces (lo excluded).",
       &NetDevCounters::receive_packets},
      {"trainscope_pod_network_transmit_packets_total",
       "Packets sent on the pod's interfaces (lo excluded).",
       &NetDevCounters::transmit_packets},
      {"trainscope_pod_network_receive_drops_total",
       "Received packets dropped on the pod's interfaces.",
       &NetDevCounters::receive_drops},
      {"trainscope_pod_network_transmit_drops_total",
       "Outgoing packets dropped on the pod's interfaces.",
       &NetDevCounters::transmit_drops},
      {"trainscope_pod_network_receive_errors_total",
       "Receive errors on the pod's interfaces.",
       &NetDevCounters::receive_errors},
      {"trainscope_pod_network_transmit_errors_total",
       "Transmit errors on the pod's interfaces.",
       &NetDevCounters::transmit_errors},
  };
  for (const auto& metric : metrics) {
    FamilyBuilder family(std::string(metric.name), metric.help,
                         MetricType::Counter);
    for (const auto& [labels, counters] : pods) {
      family.Add(labels, static_cast<double>(counters->*metric.field));
    }
    family.MoveInto(out);
  }
}

// trainscope_pod_processes{state}: every state, 0 included, so a stopped
// rank's series reads 1 against its peers' 0 rather than being absent.
void AppendProcessStates(const ExportContext& ctx,
                         std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder family(
      std::string(kPodProcesses),
      "The pod's processes by scheduler state (main "
      "threads, or a thread in D or R behind a sleeping one; at most 8 per "
      "pod).",
      MetricType::Gauge);
  for (const auto& [uid, sample] : ctx.snapshot().pod_samples) {
    const PodInfo* pod = ctx.FindPod(uid);
    if (!pod || !sample.processes) continue;
    const LabelMap labels = ctx.PodLabels(*pod);
    const ProcessStates& p = *sample.processes;
    const std::pair<const char*, unsigned> states[] = {
        {"running", p.running},
        {"sleeping", p.sleeping},
        {"disk_sleep", p.disk_sleep},
        {"stopped", p.stopped},
        {"zombie", p.zombie}};
    for (const auto& [state, count] : states) {
      family.Add(WithLabels(labels, {{"state", state}}), count);
    }
  }
  family.MoveInto(out);
}

}  // namespace

void AppendPodFamilies(const ExportContext& ctx,
                       std::vector<prometheus::MetricFamily>& out) {
  const Snapshot& snapshot = ctx.snapshot();
  FamilyBuilder info(std::string(kPodInfo),
                     "1 for every pod the agent exports (--pod-filter), with "
                     "its identity.",
                     MetricType::Gauge);
  if (snapshot.pods) {
    for (const auto& pod : *snapshot.pods) {
      if (!ctx.Exports(pod)) continue;
      auto labels = WithLabels(
          ctx.PodLabels(pod),
          {{"node", pod.node.empty() ? ctx.node() : pod.node},
           {"pod_ip", pod.pod_ip},
           {"uid", pod.uid},
           {"host_network", pod.host_network ? "true" : "false"},
           {"job_kind", std::string(JobKindName(pod.job_kind))},
           {"framework", std::string(FrameworkName(pod.framework))}});
      info.Add(labels, 1.0);
    }
  }
  info.MoveInto(out);
  size_t left_out = 0;
  if (snapshot.pods) {
    for (const auto& pod : *snapshot.pods) left_out += !ctx.Exports(pod);
  }
  FamilyBuilder("trainscope_pods_not_exported",
                "Pods of this node the agent watches but exports no pod or "
                "container series for (--pod-filter, --pod-namespaces); the "
                "diagnosis still sees them.",
                MetricType::Gauge)
      .Add({{"node", ctx.node()}}, static_cast<double>(left_out))
      .MoveInto(out);

  std::vector<CgroupSeries> pod_series, container_series;
  std::vector<std::pair<LabelMap, const NetDevCounters*>> network;
  for (const auto& [uid, sample] : snapshot.pod_samples) {
    const PodInfo* pod = ctx.FindPod(uid);
    if (!pod) continue;  // gone since the sample: its series go with it
    LabelMap labels = ctx.PodLabels(*pod);
    pod_series.push_back({labels, &sample.cgroup});
    for (const auto& container : sample.containers) {
      container_series.push_back(
          {WithLabels(labels, {{"container", container.name}}),
           &container.cgroup});
    }
    if (sample.network) network.emplace_back(labels, &*sample.network);
  }
  AppendProcessStates(ctx, out);
  AppendCgroupFamilies(false, pod_series, out);
  AppendCgroupFamilies(true, container_series, out);
  AppendNetworkFamilies(network, out);
}

}  // namespace trainscope
