#include "gpu/gpu_families.h"

#include <functional>
#include <optional>
#include <string>

#include "trainscope/metric_names.h"

namespace trainscope {
namespace {

using prometheus::MetricType;

LabelMap DeviceLabels(const GpuDeviceSample& gpu) {
  return {{"gpu", std::to_string(gpu.index)},
          {"UUID", gpu.uuid},
          {"modelName", gpu.model_name}};
}

struct DeviceMetric {
  const char* name;
  const char* help;
  MetricType type;
  std::function<std::optional<double>(const GpuDeviceSample&)> value;
};

const std::vector<DeviceMetric>& DeviceMetrics() {
  static const std::vector<DeviceMetric> metrics = {
      {"trainscope_gpu_utilization_ratio",
       "Fraction of the last sample period in which a kernel ran on the GPU.",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) { return g.gpu_utilization_ratio; }},
      {"trainscope_gpu_memory_utilization_ratio",
       "Fraction of the last sample period in which device memory was read "
       "or written.",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) { return g.memory_utilization_ratio; }},
      {"trainscope_gpu_memory_used_bytes", "Device memory in use, in bytes.",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) { return AsDouble(g.memory_used_bytes); }},
      {"trainscope_gpu_memory_total_bytes", "Device memory size, in bytes.",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) { return AsDouble(g.memory_total_bytes); }},
      {"trainscope_gpu_power_watts", "Power draw of the GPU board, in watts.",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) { return g.power_watts; }},
      {"trainscope_gpu_temperature_celsius", "GPU core temperature.",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) { return g.temperature_celsius; }},
      {"trainscope_gpu_sm_clock_hertz", "Current SM clock, in hertz.",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) { return g.sm_clock_hertz; }},
      {"trainscope_gpu_pcie_transmit_bytes_per_second",
       "PCIe bytes per second sent by the GPU (NVML's 20 ms window).",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) {
         return g.pcie_transmit_bytes_per_second;
       }},
      {"trainscope_gpu_pcie_receive_bytes_per_second",
       "PCIe bytes per second received by the GPU (NVML's 20 ms window).",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) {
         return g.pcie_receive_bytes_per_second;
       }},
      {"trainscope_gpu_ecc_corrected_errors_total",
       "Single-bit (corrected) ECC errors since the driver loaded.",
       MetricType::Counter,
       [](const GpuDeviceSample& g) {
         return AsDouble(g.ecc_corrected_errors);
       }},
      {"trainscope_gpu_ecc_uncorrected_errors_total",
       "Double-bit (uncorrected) ECC errors since the driver loaded.",
       MetricType::Counter,
       [](const GpuDeviceSample& g) {
         return AsDouble(g.ecc_uncorrected_errors);
       }},
      {"trainscope_gpu_pcie_replays_total", "PCIe replays (link retries).",
       MetricType::Counter,
       [](const GpuDeviceSample& g) { return AsDouble(g.pcie_replays); }},
      {"trainscope_gpu_xid_errors_total",
       "XID errors (driver-reported GPU faults) since the agent started "
       "watching the GPU.",
       MetricType::Counter,
       [](const GpuDeviceSample& g) { return AsDouble(g.xid_errors); }},
      {"trainscope_gpu_last_xid",
       "Code of the latest XID error (see NVIDIA's XID catalog).",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) { return AsDouble(g.last_xid); }},
      {"trainscope_gpu_compute_processes",
       "Compute processes running on the GPU (any pod or none).",
       MetricType::Gauge,
       [](const GpuDeviceSample& g) { return AsDouble(g.process_count); }},
  };
  return metrics;
}

}  // namespace

void AppendGpuFamilies(const ExportContext& ctx,
                       std::vector<prometheus::MetricFamily>& out) {
  const Snapshot& snap = ctx.snapshot();

  for (const auto& m : DeviceMetrics()) {
    FamilyBuilder family(m.name, m.help, m.type);
    for (const auto& gpu : snap.gpus) {
      family.Add(WithLabels(DeviceLabels(gpu), {{"node", ctx.node()}}),
                 m.value(gpu));
    }
    family.MoveInto(out);
  }

  FamilyBuilder retired("trainscope_gpu_retired_pages",
                        "Device memory pages retired for ECC errors, by cause.",
                        MetricType::Gauge);
  for (const auto& gpu : snap.gpus) {
    LabelMap labels = WithLabels(DeviceLabels(gpu), {{"node", ctx.node()}});
    retired.Add(WithLabels(labels, {{"cause", "single_bit_ecc"}}),
                AsDouble(gpu.retired_pages_single_bit));
    retired.Add(WithLabels(labels, {{"cause", "double_bit_ecc"}}),
                AsDouble(gpu.retired_pages_double_bit));
  }
  retired.MoveInto(out);

  FamilyBuilder memory("trainscope_pod_gpu_memory_used_bytes",
                       "GPU memory used by the container's processes on the "
                       "GPU, in bytes.",
                       MetricType::Gauge);
  FamilyBuilder util(std::string(kPodGpuUtilizationRatio),
                     "Summed SM utilization of the container's processes on "
                     "the GPU, capped at 1.",
                     MetricType::Gauge);
  FamilyBuilder xids(std::string(kPodGpuXidErrorsTotal),
                     "Xid errors the driver reported on the GPU the "
                     "container's processes run on, since the agent started "
                     "watching the GPU.",
                     MetricType::Counter);
  FamilyBuilder last_xid(std::string(kPodGpuLastXid),
                         "Code of the latest Xid error on the GPU the "
                         "container's processes run on.",
                         MetricType::Gauge);
  for (const auto& usage : snap.gpu_pods) {
    const PodInfo* pod = ctx.FindPod(usage.pod_uid);
    if (pod == nullptr) continue;  // gone from discovery: no series
    const GpuDeviceSample* gpu = nullptr;
    for (const auto& g : snap.gpus) {
      if (g.index == usage.gpu_index) gpu = &g;
    }
    LabelMap labels = ctx.PodLabels(*pod);
    labels["container"] = usage.container;
    labels["gpu"] = std::to_string(usage.gpu_index);
    labels["UUID"] = gpu ? gpu->uuid : usage.gpu_uuid;
    labels["modelName"] = gpu ? gpu->model_name : "";
    memory.Add(labels, AsDouble(usage.memory_used_bytes));
    util.Add(labels, usage.utilization_ratio);
    if (gpu) {
      xids.Add(labels, AsDouble(gpu->xid_errors));
      last_xid.Add(labels, AsDouble(gpu->last_xid));
    }
  }
  memory.MoveInto(out);
  util.MoveInto(out);
  xids.MoveInto(out);
  last_xid.MoveInto(out);
}

}  // namespace trainscope
