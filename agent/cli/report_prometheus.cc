#include "cli/report_prometheus.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <set>

#include "cli/server_text.h"
#include "trainscope/metric_names.h"
#include "trainscope/strict_number.h"

namespace trainscope::cli {
namespace {

using diagnosis::PodPoint;
using diagnosis::PodTimeline;
using diagnosis::Window;

using Field = std::optional<double> PodPoint::*;

// Series whose value goes into one PodPoint field.
const std::map<std::string, std::pair<std::string, Field>>& PodFields() {
  static const std::map<std::string, std::pair<std::string, Field>> fields = {
      {"cpu",
       {std::string(kPodCpuUsageSecondsTotal), &PodPoint::cpu_usage_seconds}},
      {"periods", {std::string(kPodCpuPeriodsTotal), &PodPoint::cpu_periods}},
      {"throttled",
       {std::string(kPodCpuThrottledPeriodsTotal),
        &PodPoint::cpu_throttled_periods}},
      {"cpu_limit",
       {std::string(kPodCpuLimitCores), &PodPoint::cpu_limit_cores}},
      {"working_set",
       {std::string(kPodMemoryWorkingSetBytes),
        &PodPoint::memory_working_set_bytes}},
      {"memory_limit",
       {std::string(kPodMemoryLimitBytes), &PodPoint::memory_limit_bytes}},
      {"oom", {std::string(kPodOomEventsTotal), &PodPoint::oom_events}},
      {"io_read",
       {std::string(kPodIoReadBytesTotal), &PodPoint::io_read_bytes}},
      {"io_write",
       {std::string(kPodIoWriteBytesTotal), &PodPoint::io_write_bytes}},
      {"proc_running",
       {std::string(kPodProcesses) + "{state=\"running\"}",
        &PodPoint::processes_running}},
      {"proc_sleeping",
       {std::string(kPodProcesses) + "{state=\"sleeping\"}",
        &PodPoint::processes_sleeping}},
      {"proc_disk_sleep",
       {std::string(kPodProcesses) + "{state=\"disk_sleep\"}",
        &PodPoint::processes_disk_sleep}},
      {"proc_stopped",
       {std::string(kPodProcesses) + "{state=\"stopped\"}",
        &PodPoint::processes_stopped}},
      {"proc_zombie",
       {std::string(kPodProcesses) + "{state=\"zombie\"}",
        &PodPoint::processes_zombie}},
      {"io_psi",
       {std::string(kPodPressureWaitingSecondsTotal) + "{resource=\"io\"}",
        &PodPoint::io_pressure_some_seconds}},
      {"memory_psi",
       {std::string(kPodPressureWaitingSecondsTotal) + "{resource=\"memory\"}",
        &PodPoint::memory_pressure_some_seconds}},
      {"cpu_psi",
       {std::string(kPodPressureWaitingSecondsTotal) + "{resource=\"cpu\"}",
        &PodPoint::cpu_pressure_some_seconds}},
      {"net_rx",
       {std::string(kPodNetworkReceiveBytesTotal),
        &PodPoint::network_receive_bytes}},
      {"net_tx",
       {std::string(kPodNetworkTransmitBytesTotal),
        &PodPoint::network_transmit_bytes}},
      {"steps",
       {std::string(kWorkerStepsPerSecond), &PodPoint::steps_per_second}},
      {"restarts", {std::string(kPodRestartsTotal), &PodPoint::restarts}},
      {"crash_looping",
       {std::string(kContainerWaiting) +
            "{reason=" + PromQLString(std::string(kCrashLoopBackOff)) + "}",
        &PodPoint::crash_looping}},
  };
  return fields;
}

// An exit code or signal label ("137"); 0 when it is not one.
int SmallWhole(const std::string& text) {
  const auto n = ParseWholeNumber(text);
  return n && *n <= 65535 ? static_cast<int>(*n) : 0;
}

// `metric` (possibly with its own matchers) with more matchers ("" = none).
std::string Select(const std::string& metric, const std::string& matchers) {
  if (matchers.empty()) return metric;
  const size_t brace = metric.find('{');
  if (brace == std::string::npos) return metric + "{" + matchers + "}";
  return metric.substr(0, metric.size() - 1) + "," + matchers + "}";
}

// A series as an error names it: its labels, as Prometheus prints them.
std::string SeriesName(const nlohmann::json& series) {
  const auto metric = series.find("metric");
  if (metric == series.end() || !metric->is_object()) return "{}";
  std::string name;
  std::string labels;
  for (const auto& [key, value] : metric->items()) {
    const std::string text =
        value.is_string() ? value.get<std::string>() : value.dump();
    if (key == "__name__") {
      name = text;
      continue;
    }
    if (!labels.empty()) labels += ",";
    labels += key + "=" + nlohmann::json(text).dump();
  }
  return ServerText(name + "{" + labels + "}", 200);
}

// Calls fn(t, value) for every finite sample of a series. A value that is
// not a number as Prometheus writes one (trainscope/strict_number.h) is an
// error: read leniently, "abc" or "12abc" would silently become a gap or 12.
Status ForEachSample(const std::string& query, const nlohmann::json& series,
                     const std::function<void(double, double)>& fn) {
  const auto values = series.find("values");
  if (values == series.end() || !values->is_array()) {
    return Status::Error("query " + query + ": series " + SeriesName(series) +
                         " has no values");
  }
  for (const auto& v : *values) {
    if (!v.is_array() || v.size() != 2 || !v[0].is_number() ||
        !v[1].is_string()) {
      return Status::Error("query " + query + ": series " + SeriesName(series) +
                           " has a malformed sample " +
                           ServerText(v.dump(), 80));
    }
    const auto& text = v[1].get_ref<const std::string&>();
    const auto value = ParsePrometheusValue(text);
    if (!value) {
      return Status::Error("query " + query + ": series " + SeriesName(series) +
                           " has a sample value '" + ServerText(text, 40) +
                           "' that is not a number");
    }
    if (!std::isfinite(*value)) continue;
    fn(v[0].get<double>(), *value);
  }
  return Status::Ok();
}

// The pod a series belongs to, looked up once per series (not per sample:
// a whole-cluster answer holds millions of samples).
struct PodSlot {
  diagnosis::PodMeta* meta = nullptr;
  std::map<double, PodPoint>* points = nullptr;

  PodPoint& At(double t) const {
    PodPoint& p = (*points)[t];
    p.t = t;
    return p;
  }
};

struct Builder {
  Window& w;
  std::map<std::string, std::map<double, PodPoint>> points;

  PodSlot Slot(const nlohmann::json& metric) {
    const std::string ns = LabelOf(metric, "namespace");
    const std::string pod = LabelOf(metric, "pod");
    const std::string key = diagnosis::PodKey(ns, pod);
    auto& meta = w.pods[key].meta;
    meta.namespace_name = ns;
    meta.pod = pod;
    if (meta.training_job.empty()) {
      meta.training_job = LabelOf(metric, "training_job");
    }
    if (meta.role == Role::kUnknown) {
      meta.role = ParseRole(LabelOf(metric, "role")).value_or(Role::kUnknown);
    }
    return {&meta, &points[key]};
  }
};

}  // namespace

std::string PromQLString(const std::string& value) {
  return nlohmann::json(value).dump();
}

std::string LabelOf(const nlohmann::json& metric, const char* name) {
  auto it = metric.find(name);
  return it != metric.end() && it->is_string() ? it->get<std::string>() : "";
}

std::string FilterMatchers(const std::string& ns, const std::string& job,
                           const std::string& extra) {
  std::string matchers = extra;
  auto add = [&](const std::string& label, const std::string& value) {
    if (value.empty()) return;
    if (!matchers.empty()) matchers += ",";
    matchers += label + "=" + PromQLString(value);
  };
  add("namespace", ns);
  add("training_job", job);
  return matchers;
}

std::vector<PromQuery> ClusterQueries(const std::string& ns,
                                      const std::string& job,
                                      const std::string& extra) {
  return ClusterQueries(
      std::vector<std::string>{FilterMatchers(ns, job, extra)}, extra);
}

std::vector<PromQuery> ClusterQueries(
    const std::vector<std::string>& matcher_sets,
    const std::string& node_matchers) {
  std::vector<PromQuery> out;
  // One query per matcher list, not one `or` of them: Prometheus matches
  // the label sets of both sides of every `or` at every step, which took
  // seconds for a batch of 20 namespaces where plain selectors take
  // milliseconds.
  auto pods = [&](const std::string& name, const std::string& metric) {
    for (const auto& matchers : matcher_sets) {
      out.push_back({name, Select(metric, matchers)});
    }
  };
  for (const auto& [name, field] : PodFields()) pods(name, field.first);
  pods("info", std::string(kPodInfo));
  pods("peer_rx", std::string(kPeerReceiveBytesTotal));
  pods("peer_tx", std::string(kPeerTransmitBytesTotal));
  pods("peer_rx_busy", std::string(kPeerReceiveExchangeSecondsTotal));
  pods("peer_tx_busy", std::string(kPeerTransmitExchangeSecondsTotal));
  pods("peer_wait", std::string(kPeerWaitSecondsTotal));
  pods("gpu", std::string(kPodGpuUtilizationRatio));
  pods("gpu_xid", std::string(kPodGpuXidErrorsTotal));
  pods("gpu_last_xid", std::string(kPodGpuLastXid));
  pods("bandwidth", std::string(kPodBandwidthLimitBytesPerSecond));
  pods("last_terminated",
       std::string(kContainerLastTerminatedTimestampSeconds));
  pods("started", std::string(kContainerStartedTimestampSeconds));
  // Node series carry no pod labels: never filtered by pod.
  auto node = [&](const std::string& metric) {
    return Select(metric, node_matchers);
  };
  // trainscope_node_cpu_count is the deprecated name that agents of the
  // previous release export: `or` keeps it only where the new one is absent.
  out.push_back({"node_cpus", node(std::string(kNodeCpus)) + " or " +
                                  node(std::string(kNodeCpuCountDeprecated))});
  out.push_back({"nic_speed", node(std::string(kNodeNetworkSpeedBytes))});
  out.push_back({"nic_rx", node(std::string(kNodeNetworkReceiveBytesTotal))});
  out.push_back({"nic_tx", node(std::string(kNodeNetworkTransmitBytesTotal))});
  return out;
}

struct WindowBuilder::State {
  Window w;
  Builder b{w, {}};
  std::map<std::string, std::map<double, diagnosis::NodePoint>> nic_points;
  std::map<std::string, std::map<double, std::map<std::string, double>>>
      gpu_use;
};

WindowBuilder::WindowBuilder() : state_(std::make_unique<State>()) {}
WindowBuilder::~WindowBuilder() = default;

Status WindowBuilder::Add(const std::string& name,
                          const nlohmann::json& result) {
  Window& w = state_->w;
  Builder& b = state_->b;
  auto& nic_points = state_->nic_points;
  auto& gpu_use = state_->gpu_use;
  {  // one answer (kept as a block: the body predates the builder)
    if (!result.is_array()) {
      return Status::Error("query " + name + ": result is not a matrix");
    }
    for (const auto& series : result) {
      if (!series.is_object()) {
        return Status::Error("query " + name + ": a series is not an object: " +
                             ServerText(series.dump(), 80));
      }
      const auto metric = series.value("metric", nlohmann::json::object());
      std::function<void(double, double)> fn;
      if (auto f = PodFields().find(name); f != PodFields().end()) {
        Field field = f->second.second;
        const PodSlot slot = b.Slot(metric);
        fn = [slot, field](double t, double v) { slot.At(t).*field = v; };
      } else if (name == "info") {
        const std::string uid = LabelOf(metric, "uid");
        const std::string node = LabelOf(metric, "node");
        const JobKind kind = ParseJobKind(LabelOf(metric, "job_kind"))
                                 .value_or(JobKind::kUnknown);
        const Framework framework = ParseFramework(LabelOf(metric, "framework"))
                                        .value_or(Framework::kUnknown);
        const PodSlot slot = b.Slot(metric);
        fn = [slot, uid, node, kind, framework](double t, double) {
          slot.At(t).instance = uid;
          slot.meta->node = node;
          slot.meta->job_kind = kind;
          slot.meta->framework = framework;
        };
      } else if (name == "peer_rx_busy" || name == "peer_tx_busy" ||
                 name == "peer_wait") {
        // Seconds per peer: both directions' exchanges add up; the wait
        // is one series.
        const std::string peer_pod = LabelOf(metric, "peer_pod");
        if (peer_pod.empty()) continue;
        const std::string peer =
            diagnosis::PodKey(LabelOf(metric, "peer_namespace"), peer_pod);
        const PodSlot slot = b.Slot(metric);
        const bool wait = name == "peer_wait";
        fn = [slot, peer, wait](double t, double v) {
          auto& c = slot.At(t).peers[peer];
          (wait ? c.wait_seconds : c.exchange_seconds) += v;
        };
      } else if (name == "peer_rx" || name == "peer_tx") {
        const std::string peer_pod = LabelOf(metric, "peer_pod");
        if (peer_pod.empty()) continue;  // unknown peers: no pod to judge
        const std::string peer =
            diagnosis::PodKey(LabelOf(metric, "peer_namespace"), peer_pod);
        if (auto role = ParseRole(LabelOf(metric, "peer_role"))) {
          w.peer_roles[peer] = *role;
        }
        const bool rx = name == "peer_rx";
        const PodSlot slot = b.Slot(metric);
        fn = [slot, peer, rx](double t, double v) {
          auto& c = slot.At(t).peers[peer];
          (rx ? c.receive_bytes : c.transmit_bytes) += v;
        };
      } else if (name == "gpu") {
        // Per GPU: the pod's containers summed (capped at 1, as the agent
        // does); the mean over the pod's GPUs is taken once all are in.
        const std::string gpu = LabelOf(metric, "gpu");
        const PodSlot slot = b.Slot(metric);
        auto& use = gpu_use[diagnosis::PodKey(LabelOf(metric, "namespace"),
                                              LabelOf(metric, "pod"))];
        fn = [slot, &use, gpu](double t, double v) {
          slot.At(t);
          double& sum = use[t][gpu];
          sum = std::min(1.0, sum + v);
        };
      } else if (name == "gpu_xid" || name == "gpu_last_xid") {
        // Per GPU the pod holds (one series per container on it: the same
        // device value, so the last one written is as good as any).
        const auto gpu = ParseWholeNumber(LabelOf(metric, "gpu"));
        if (!gpu || *gpu > 65535) continue;  // not an NVML index
        const auto index = static_cast<unsigned>(*gpu);
        const std::string uuid = LabelOf(metric, "UUID");
        const bool counter = name == "gpu_xid";
        const PodSlot slot = b.Slot(metric);
        fn = [slot, index, uuid, counter](double t, double v) {
          auto& x = slot.At(t).gpu_xids[index];
          x.uuid = uuid;
          (counter ? x.errors : x.last_xid.emplace()) = v;
        };
      } else if (name == "bandwidth") {
        const bool rx = LabelOf(metric, "direction") == "receive";
        const PodSlot slot = b.Slot(metric);
        fn = [slot, rx](double t, double v) {
          slot.At(t);
          (rx ? slot.meta->ingress_limit_bytes_per_second
              : slot.meta->egress_limit_bytes_per_second) = v;
        };
      } else if (name == "last_terminated") {
        // The newest exit over the pod's containers: its finishedAt is the
        // value, so a later one replaces it whatever order series come in.
        ContainerTermination t;
        t.reason = LabelOf(metric, "reason");
        t.exit_code = SmallWhole(LabelOf(metric, "exit_code"));
        t.signal = SmallWhole(LabelOf(metric, "signal"));
        const std::string container = LabelOf(metric, "container");
        const PodSlot slot = b.Slot(metric);
        fn = [slot, t, container](double time, double v) mutable {
          slot.At(time);
          auto& last = slot.meta->last_termination;
          if (last && last->finished_at_s.value_or(0) >= v) return;
          t.finished_at_s = v;
          last = t;
          slot.meta->last_terminated_container = container;
        };
      } else if (name == "started") {
        const PodSlot slot = b.Slot(metric);
        fn = [slot](double t, double v) {
          slot.At(t);
          auto& since = slot.meta->running_since_s;
          since = std::max(since.value_or(0), v);
        };
      } else if (name == "node_cpus" || name == "nic_speed") {
        const std::string node = LabelOf(metric, "node");
        const bool cpus = name == "node_cpus";
        fn = [&, node, cpus](double, double v) {
          auto& meta = w.nodes[node];
          auto& slot = cpus ? meta.cpu_count : meta.nic_speed_bytes_per_second;
          slot = std::max(slot.value_or(0), v);
        };
      } else if (name == "nic_rx" || name == "nic_tx") {
        // Summed over the node's physical NICs, like the agent does.
        const std::string node = LabelOf(metric, "node");
        const bool rx = name == "nic_rx";
        fn = [&, node, rx](double t, double v) {
          auto& p = nic_points[node][t];
          p.t = t;
          (rx ? p.receive_bytes : p.transmit_bytes) += v;
        };
      } else {
        return Status::Error("query " + name + ": no known destination");
      }
      if (Status s = ForEachSample(name, series, fn); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

Window WindowBuilder::Finish() {
  Window& w = state_->w;
  Builder& b = state_->b;
  auto& nic_points = state_->nic_points;
  auto& gpu_use = state_->gpu_use;
  for (auto& [key, by_time] : b.points) {
    PodTimeline& t = w.pods[key];
    for (auto& [time, p] : by_time) {
      if (auto g = gpu_use.find(key); g != gpu_use.end()) {
        if (auto at = g->second.find(time); at != g->second.end()) {
          double sum = 0;
          for (const auto& [gpu, v] : at->second) sum += v;
          p.gpus = static_cast<unsigned>(at->second.size());
          p.gpu_utilization_ratio = sum / p.gpus;
        }
      }
      t.points.push_back(std::move(p));
    }
  }
  for (auto& [node, by_time] : nic_points) {
    for (auto& [time, p] : by_time) w.node_points[node].push_back(p);
  }
  // A series without a finite sample names a pod it says nothing about.
  std::erase_if(w.pods,
                [](const auto& entry) { return entry.second.points.empty(); });
  Window out = std::move(w);
  state_ = std::make_unique<State>();
  return out;
}

Status WindowFromMatrices(const std::map<std::string, nlohmann::json>& results,
                          Window* window) {
  WindowBuilder builder;
  for (const auto& [name, result] : results) {
    if (Status s = builder.Add(name, result); !s.ok()) return s;
  }
  *window = builder.Finish();
  return Status::Ok();
}

std::vector<MissingNode> MissingNodes(const nlohmann::json& node_series,
                                      double end, double grace_seconds) {
  std::map<std::string, double> last;
  if (!node_series.is_array()) return {};
  for (const auto& series : node_series) {
    if (!series.is_object()) continue;
    const auto metric = series.value("metric", nlohmann::json::object());
    const std::string node = LabelOf(metric, "node");
    if (node.empty()) continue;
    double& newest = last.try_emplace(node, 0.0).first->second;
    (void)ForEachSample("node_cpus", series, [&newest](double t, double) {
      newest = std::max(newest, t);
    });
  }
  std::vector<MissingNode> out;
  for (const auto& [node, t] : last) {
    if (t < end - grace_seconds) out.push_back({node, t});
  }
  return out;
}

PodList PodsOfWindow(const Window& window) {
  PodList pods;
  for (const auto& [key, t] : window.pods) {
    PodInfo p;
    p.namespace_name = t.meta.namespace_name;
    p.name = t.meta.pod;
    p.training_job = t.meta.training_job;
    p.role = t.meta.role;
    p.job_kind = t.meta.job_kind;
    p.framework = t.meta.framework;
    p.node = t.meta.node;
    pods.push_back(std::move(p));
  }
  return pods;
}

}  // namespace trainscope::cli
