#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>

#include "gpu/device_reader.h"
#include "gpu/nvml_library.h"
#include "gpu/xid_events.h"
#include "trainscope/collector.h"

namespace trainscope {

// Per-device GPU metrics from NVML, and per-pod usage from the compute
// processes NVML lists (host PIDs, mapped to pods via <proc>/<pid>/cgroup).
// NVML is opened on first use; where there is none (CPU nodes) the collector
// answers NoData and tries again every `retry_interval`, so a driver
// installed later is picked up without a restart.
class GpuCollector : public Collector {
 public:
  static constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

  GpuCollector(const HostPaths& host, std::string nvml_library_path,
               std::chrono::steady_clock::duration retry_interval =
                   std::chrono::seconds(60));
  ~GpuCollector() override;

  std::string_view name() const override { return "gpu"; }
  CollectStatus Collect(const CollectContext& ctx, Snapshot& out) override;

 private:
  Status EnsureOpen();
  Status CollectDevices(const CollectContext& ctx, Snapshot& out);
  using PodIndex = std::unordered_map<std::string, const PodInfo*>;
  void Attribute(const PodIndex& pods, const GpuDeviceSample& device,
                 const std::vector<GpuProcess>& processes, Snapshot& out);
  void WarnOnce(const std::string& message);

  HostPaths host_;
  std::string library_path_;
  std::chrono::steady_clock::duration retry_interval_;

  std::unique_ptr<NvmlLibrary> nvml_;
  // Declared after nvml_: its event set is freed before nvmlShutdown.
  std::unique_ptr<XidWatcher> xid_;
  Status open_status_ = Status::Ok();
  std::chrono::steady_clock::time_point next_open_;
  bool tried_open_ = false;

  std::map<unsigned, DeviceMemo> memos_;  // by NVML index
  std::set<unsigned> lost_;               // indices logged as lost
  std::set<std::string> warned_;          // messages logged once
};

}  // namespace trainscope
