#include "pod_builder.h"

#include <cstdio>
#include <functional>

namespace trainscope::testing {

std::string FakeUid(const std::string& seed) {
  // Two independent hashes give 128 bits, formatted as 8-4-4-4-12.
  const uint64_t a = std::hash<std::string>{}(seed);
  const uint64_t b = std::hash<std::string>{}(seed + "#uid");
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%08x-%04x-%04x-%04x-%012llx",
                static_cast<unsigned>(a >> 32),
                static_cast<unsigned>((a >> 16) & 0xffff),
                static_cast<unsigned>(0x4000 | (a & 0x0fff)),
                static_cast<unsigned>(0x8000 | ((b >> 48) & 0x3fff)),
                static_cast<unsigned long long>(b & 0xffffffffffffULL));
  return buf;
}

nlohmann::json FakePod::Build() const {
  using nlohmann::json;
  const std::string pod_uid =
      uid.empty() ? FakeUid(namespace_name + "/" + name) : uid;
  json metadata = {{"name", name},
                   {"namespace", namespace_name},
                   {"uid", pod_uid},
                   {"resourceVersion", "1"},
                   {"creationTimestamp", "2026-01-01T00:00:00Z"}};
  if (!labels.empty()) metadata["labels"] = labels;
  if (!annotations.empty()) metadata["annotations"] = annotations;
  if (!owner_kind.empty()) {
    metadata["ownerReferences"] =
        json::array({{{"apiVersion", owner_kind == "TFJob" ? "kubeflow.org/v1"
                                     : owner_kind == "Job" ? "batch/v1"
                                                           : "apps/v1"},
                      {"kind", owner_kind},
                      {"name", owner_name},
                      {"uid", FakeUid(owner_kind + "/" + owner_name)},
                      {"controller", true},
                      {"blockOwnerDeletion", true}}});
  }
  json spec_containers = json::array();
  json statuses = json::array();
  bool all_limited = true;
  for (size_t i = 0; i < containers.size(); ++i) {
    const FakeContainer& c = containers[i];
    json env = json::array();
    if (i == 0 && !tf_config.empty()) {
      env.push_back({{"name", "TF_CONFIG"}, {"value", tf_config}});
    }
    for (const auto& [k, v] : c.env) env.push_back({{"name", k}, {"value", v}});
    json limits = json::object();
    if (!c.cpu_limit.empty()) limits["cpu"] = c.cpu_limit;
    if (!c.memory_limit.empty()) limits["memory"] = c.memory_limit;
    all_limited =
        all_limited && !c.cpu_limit.empty() && !c.memory_limit.empty();
    json container = {{"name", c.name},
                      {"image", c.image},
                      {"ports", json::array({{{"containerPort", 2222},
                                              {"name", "tfjob-port"},
                                              {"protocol", "TCP"}}})},
                      {"resources", {{"limits", limits}, {"requests", limits}}},
                      {"imagePullPolicy", "IfNotPresent"}};
    if (!env.empty()) container["env"] = env;
    spec_containers.push_back(container);
    json status = {{"name", c.name},
                   {"image", c.image},
                   {"ready", !c.id.empty()},
                   {"restartCount", 0},
                   {"started", !c.id.empty()}};
    if (!c.id.empty()) {
      status["containerID"] = c.runtime + "://" + c.id;
      status["state"] = {{"running", {{"startedAt", "2026-01-01T00:00:05Z"}}}};
    } else {
      status["state"] = {{"waiting", {{"reason", "ContainerCreating"}}}};
    }
    statuses.push_back(status);
  }
  json spec = {{"containers", spec_containers},
               {"restartPolicy", "OnFailure"},
               {"schedulerName", "default-scheduler"},
               {"serviceAccountName", "default"}};
  if (!node.empty()) spec["nodeName"] = node;
  if (host_network) spec["hostNetwork"] = true;
  json status = {
      {"phase", phase},
      {"hostIP", host_ip},
      {"qosClass", all_limited ? "Guaranteed" : "Burstable"},
      {"conditions", json::array({{{"type", "Ready"}, {"status", "True"}}})},
      {"containerStatuses", statuses}};
  const std::string ip = host_network ? host_ip : pod_ip;
  if (!ip.empty()) {
    status["podIP"] = ip;
    status["podIPs"] = json::array({{{"ip", ip}}});
  }
  return {{"kind", "Pod"},
          {"apiVersion", "v1"},
          {"metadata", metadata},
          {"spec", spec},
          {"status", status}};
}

nlohmann::json BuildPodList(const std::vector<nlohmann::json>& pods,
                            const std::string& resource_version) {
  return {{"kind", "PodList"},
          {"apiVersion", "v1"},
          {"metadata", {{"resourceVersion", resource_version}}},
          {"items", pods}};
}

}  // namespace trainscope::testing
