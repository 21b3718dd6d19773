#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace trainscope {

enum class Role { kUnknown, kPs, kWorker, kChief, kMaster, kEvaluator };

// "ps", "worker", ...; "" for kUnknown (the label value Prometheus shows).
std::string_view RoleName(Role role);
// Case-insensitive; accepts the Kubeflow replica types and "parameter_server".
std::optional<Role> ParseRole(std::string_view text);
// Every role's label value (RoleName of each known role), sorted: what a
// set-based label selector names to find training pods.
std::vector<std::string_view> RoleLabelValues();

struct ContainerInfo {
  std::string name;
  std::string id;       // runtime id without the "containerd://" scheme
  std::string runtime;  // "containerd", "cri-o", "docker", ... ("" unknown)
};

struct PodInfo {
  std::string uid;
  std::string namespace_name;
  std::string name;
  std::string node;
  std::string phase;
  std::string pod_ip;
  std::vector<std::string> pod_ips;
  bool host_network = false;
  std::map<std::string, std::string> labels;
  std::map<std::string, std::string> annotations;
  std::vector<ContainerInfo> containers;
  // TF_CONFIG of the first container that sets it ("" when none does).
  std::string tf_config;
  // Sum of the containers' limits in the pod spec, when every container
  // sets one (a pod with one unlimited container is unlimited).
  std::optional<double> spec_cpu_limit_cores;
  std::optional<uint64_t> spec_memory_limit_bytes;

  // Training identity, inferred by discovery/roles.
  std::string training_job;
  Role role = Role::kUnknown;
  int replica_index = -1;  // -1 when unknown
};

using PodList = std::vector<PodInfo>;

// The pods this agent currently knows. Discovery replaces the whole list;
// readers take an immutable shared snapshot and never block discovery.
class PodTable {
 public:
  PodTable();
  void Replace(PodList pods);
  std::shared_ptr<const PodList> Get() const;
  // Increments on every Replace; lets readers skip unchanged lists.
  uint64_t generation() const;

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const PodList> pods_;
  uint64_t generation_ = 0;
};

}  // namespace trainscope
