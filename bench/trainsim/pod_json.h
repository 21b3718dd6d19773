#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "layout.h"

namespace trainsim {

// What may change on a pod after creation (faults), reflected in its JSON.
// The kubelet's restarts of a pod's container (the crash fault), as its
// containerStatuses show them.
struct ContainerRestarts {
  int count = 0;
  int last_exit_code = 0;
  std::string last_reason;  // "Error" ("" = never terminated)
  std::string last_started_at, last_finished_at;  // RFC 3339
  std::string running_since;  // "" = since the pod's creation
  bool backing_off = false;   // waiting in CrashLoopBackOff
};

struct PodOverrides {
  std::optional<double> cpu_limit_cores;  // in-place resize
  std::map<std::string, std::string> annotations;
  ContainerRestarts restarts;
};

// The Pod object the Kubernetes API would return for this simulated pod:
// labels per the job's label style, TF_CONFIG, resources, containerID and
// uid matching the cgroups trainsim creates. Pure.
nlohmann::json PodJson(const Layout& layout, const SimPod& pod,
                       const PodOverrides& overrides,
                       const std::string& resource_version,
                       const std::string& created_at);

// The address of the layout's node `k` (Node status, pods' hostIP). The
// node has no address on the pods' network; a documentation address
// (192.0.2.0/24) keeps the field realistic without pointing anywhere.
std::string NodeHostIp(int k);

// TF_CONFIG as the TFJob operator writes it.
std::string TfConfig(const Layout& layout, const SimPod& pod);

// Kubernetes quantities: 0.5 -> "500m", 2 -> "2"; 268435456 -> "256Mi".
std::string CpuQuantity(double cores);
std::string MemoryQuantity(uint64_t bytes);

}  // namespace trainsim
