#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "layout.h"

namespace trainsim {

// What may change on a pod after creation (faults), reflected in its JSON.
struct PodOverrides {
  std::optional<double> cpu_limit_cores;  // in-place resize
  std::map<std::string, std::string> annotations;
};

// The Pod object the Kubernetes API would return for this simulated pod:
// labels per the job's label style, TF_CONFIG, resources, containerID and
// uid matching the cgroups trainsim creates. Pure.
nlohmann::json PodJson(const Layout& layout, const SimPod& pod,
                       const PodOverrides& overrides,
                       const std::string& resource_version,
                       const std::string& created_at);

// TF_CONFIG as the TFJob operator writes it.
std::string TfConfig(const Layout& layout, const SimPod& pod);

// Kubernetes quantities: 0.5 -> "500m", 2 -> "2"; 268435456 -> "256Mi".
std::string CpuQuantity(double cores);
std::string MemoryQuantity(uint64_t bytes);

}  // namespace trainsim
