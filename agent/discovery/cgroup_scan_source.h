#pragma once

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include "discovery/discovery_config.h"
#include "discovery/pod_source.h"
#include "discovery/roles.h"
#include "discovery/stop_signal.h"
#include "trainscope/host_paths.h"
#include "trainscope/pod.h"

namespace trainscope {

struct CgroupScanSourceOptions {
  std::chrono::milliseconds interval{1000};
  std::vector<LabelScheme> label_schemes = DefaultLabelSchemes();
};

// `cgroup` discovery for nodes without API access: pods are the kubelet's pod
// cgroups. Without an API there are no names, namespaces, labels or IPs: a
// pod's name is its UID, its namespace "", and containers are named by the
// first 12 characters of their runtime id (as `docker ps` shows them).
class CgroupScanSource : public PodSource {
 public:
  CgroupScanSource(CgroupScanSourceOptions options, HostPaths host,
                   PodTable& table);
  ~CgroupScanSource() override;

  std::string_view name() const override {
    return NameOfEnum(kDiscoveryModeNames, DiscoveryMode::kCgroup);
  }
  Status Start() override;
  void Stop() override;
  DiscoveryStats stats() const override;

  // One scan; public so the agent (and tests) can force a refresh.
  Status ScanOnce();

 private:
  void Run();

  const CgroupScanSourceOptions options_;
  const HostPaths host_;
  PodTable& table_;
  StopSignal stop_;
  std::thread thread_;
  size_t last_count_ = static_cast<size_t>(-1);

  mutable std::mutex stats_mu_;
  DiscoveryStats stats_;
};

}  // namespace trainscope
