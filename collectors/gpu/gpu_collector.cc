#include "gpu/gpu_collector.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <exception>
#include <tuple>
#include <utility>

#include "gpu/pid_pod.h"

namespace trainscope {

GpuCollector::GpuCollector(const HostPaths& host, std::string nvml_library_path,
                           std::chrono::steady_clock::duration retry_interval)
    : host_(host),
      library_path_(nvml_library_path.empty() ? kDefaultLibrary
                                              : std::move(nvml_library_path)),
      retry_interval_(retry_interval) {}

GpuCollector::~GpuCollector() = default;

CollectStatus GpuCollector::Collect(const CollectContext& ctx, Snapshot& out) {
  try {
    Status open = EnsureOpen();
    if (!open.ok()) return open;
    return CollectDevices(ctx, out);
  } catch (const std::exception& e) {
    return Status::Error(std::string("gpu collection failed: ") + e.what());
  } catch (...) {
    return Status::Error("gpu collection failed: unknown exception");
  }
}

Status GpuCollector::EnsureOpen() {
  if (nvml_) return Status::Ok();
  auto now = std::chrono::steady_clock::now();
  if (tried_open_ && now < next_open_) return open_status_;
  const bool first = !tried_open_;
  tried_open_ = true;
  next_open_ = now + retry_interval_;

  auto result = NvmlLibrary::Open(library_path_);
  if (!result.library) {
    // Logged when it first happens or changes; retries stay quiet.
    if (first || result.status.message() != open_status_.message()) {
      if (result.status.code() == Status::Code::kNoData) {
        spdlog::info("[gpu] GPU metrics off: {}", result.status.message());
      } else {
        spdlog::error("[gpu] GPU metrics off: {}", result.status.message());
      }
    }
    open_status_ = result.status;
    return open_status_;
  }
  nvml_ = std::move(result.library);
  xid_ = std::make_unique<XidWatcher>(*nvml_);
  open_status_ = Status::Ok();
  spdlog::info("[gpu] NVML loaded from {}", library_path_);
  return open_status_;
}

void GpuCollector::WarnOnce(const std::string& message) {
  if (warned_.insert(message).second) spdlog::warn("[gpu] {}", message);
}

Status GpuCollector::CollectDevices(const CollectContext& ctx, Snapshot& out) {
  unsigned count = 0;
  nvmlReturn_t r = nvml_->fn().DeviceGetCount(&count);
  if (r != NVML_SUCCESS) {
    return Status::Error(nvml_->Describe("nvmlDeviceGetCount_v2", r));
  }
  if (count == 0) {
    if (warned_.insert("no devices").second) {
      spdlog::info("[gpu] NVML reports no GPUs on this node");
    }
    return Status::NoData("NVML reports no GPUs on this node");
  }
  warned_.erase("no devices");

  PodIndex pods;
  if (ctx.pods) {
    for (const auto& p : *ctx.pods) pods[p.uid] = &p;
  }
  std::string errors;
  std::vector<DeviceRead> reads;
  for (unsigned i = 0; i < count; ++i) {
    DeviceMemo& memo = memos_[i];
    DeviceRead read = ReadDevice(*nvml_, i, memo);
    for (const auto& w : read.warnings) {
      WarnOnce("GPU " + std::to_string(i) + ": " + w);
    }
    if (!read.sample) {
      std::string who = "GPU " + std::to_string(i);
      if (!memo.uuid.empty()) who += " (" + memo.uuid + ")";
      std::string msg =
          who + (read.lost ? " is lost: " : " unreadable: ") + read.error;
      if (lost_.insert(i).second) spdlog::error("[gpu] {}", msg);
      if (!errors.empty()) errors += "; ";
      errors += msg;
      continue;
    }
    if (lost_.erase(i) > 0) {
      spdlog::info("[gpu] GPU {} ({}) is readable again", i, read.sample->uuid);
    }
    xid_->Register(read.handle, i);
    reads.push_back(std::move(read));
  }
  xid_->Drain();
  for (auto& read : reads) {
    GpuDeviceSample& sample = *read.sample;
    if (auto xid = xid_->CountsFor(sample.index)) {
      sample.xid_errors = xid->total;
      if (xid->total > 0) sample.last_xid = xid->last_xid;
    }
    Attribute(pods, sample, read.processes, out);
    out.gpus.push_back(std::move(sample));
  }
  if (!errors.empty()) {
    return Status::Error(errors + " (" + std::to_string(out.gpus.size()) +
                         " other GPU(s) reported)");
  }
  return Status::Ok();
}

void GpuCollector::Attribute(const PodIndex& pods,
                             const GpuDeviceSample& device,
                             const std::vector<GpuProcess>& processes,
                             Snapshot& out) {
  // (pod uid, container name) -> index into out.gpu_pods for this device.
  std::map<std::pair<std::string, std::string>, size_t> rows;
  for (const auto& proc : processes) {
    PidPodResult owner = LookupPidPod(host_.proc, proc.pid);
    // Exited since NVML listed it, or a process outside any pod (a system
    // service, a user's shell): nothing to attribute.
    if (owner.kind != PidLookup::kPod) continue;

    std::string container;
    auto found = pods.find(owner.pod.pod_uid);
    const PodInfo* pod = found == pods.end() ? nullptr : found->second;
    if (pod && !owner.pod.container_id.empty()) {
      for (const auto& c : pod->containers) {
        if (c.id == owner.pod.container_id) container = c.name;
      }
    }
    if (container.empty() && !owner.pod.container_id.empty()) {
      container = owner.pod.container_id.substr(0, 12);
    }

    auto key = std::make_pair(owner.pod.pod_uid, container);
    auto [it, added] = rows.try_emplace(key, out.gpu_pods.size());
    if (added) {
      GpuPodUsage usage;
      usage.pod_uid = owner.pod.pod_uid;
      usage.container = container;
      usage.gpu_index = device.index;
      usage.gpu_uuid = device.uuid;
      out.gpu_pods.push_back(std::move(usage));
    }
    GpuPodUsage& usage = out.gpu_pods[it->second];
    ++usage.processes;
    if (proc.memory_bytes) {
      usage.memory_used_bytes =
          usage.memory_used_bytes.value_or(0) + *proc.memory_bytes;
    }
    if (proc.sm_ratio) {
      usage.utilization_ratio =
          std::min(1.0, usage.utilization_ratio.value_or(0) + *proc.sm_ratio);
    }
  }
}

}  // namespace trainscope
