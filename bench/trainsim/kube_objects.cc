#include "kube_objects.h"

#include "pod_json.h"

namespace trainsim {

using nlohmann::json;

namespace {

// The object at `key`, or an empty object.
json ObjectAt(const json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_object() ? *it : json::object();
}

// A merge patch turning map `before` into map `after`; empty when equal.
json MapPatch(const json& before, const json& after) {
  json patch = json::object();
  for (const auto& [k, v] : after.items())
    if (!before.contains(k) || before[k] != v) patch[k] = v;
  for (const auto& [k, v] : before.items())
    if (!after.contains(k)) patch[k] = nullptr;
  return patch;
}

}  // namespace

json PodCreateBody(const json& pod) {
  json body = pod;
  body.erase("status");
  json& meta = body["metadata"];
  for (const char* owned : {"uid", "resourceVersion", "creationTimestamp"})
    meta.erase(owned);
  return body;
}

json PodStatusPatch(const json& pod) { return {{"status", pod.at("status")}}; }

std::optional<json> PodMetadataPatch(const json& before, const json& after) {
  const json b = ObjectAt(before, "metadata");
  const json a = ObjectAt(after, "metadata");
  json meta = json::object();
  for (const char* key : {"labels", "annotations"}) {
    json patch = MapPatch(ObjectAt(b, key), ObjectAt(a, key));
    if (!patch.empty()) meta[key] = std::move(patch);
  }
  if (meta.empty()) return std::nullopt;
  return json{{"metadata", meta}};
}

std::optional<json> PodResizePatch(const json& before, const json& after) {
  const json& was = before.at("spec").at("containers");
  json containers = json::array();
  for (const json& c : after.at("spec").at("containers")) {
    json old_resources = json::object();
    for (const json& o : was)
      if (o.at("name") == c.at("name"))
        old_resources = ObjectAt(o, "resources");
    const json resources = ObjectAt(c, "resources");
    if (resources != old_resources)
      containers.push_back({{"name", c.at("name")}, {"resources", resources}});
  }
  if (containers.empty()) return std::nullopt;
  return json{{"spec", {{"containers", containers}}}};
}

json NodeCreateBody(const Layout& layout, int k) {
  const std::string& name = layout.nodes.at(k).name;
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata",
           {{"name", name},
            {"labels",
             {{"kubernetes.io/hostname", name},
              {"kubernetes.io/os", "linux"},
              {"kubernetes.io/arch", "amd64"}}}}}};
}

json NodeStatusPatch(const Layout& layout, int k, const std::string& now) {
  const std::string& name = layout.nodes.at(k).name;
  // What the simulated node holds; the kubelet reports the machine's size.
  const json capacity = {{"cpu", "2"}, {"memory", "8Gi"}, {"pods", "110"}};
  return {{"status",
           {{"capacity", capacity},
            {"allocatable", capacity},
            {"conditions",
             {{{"type", "Ready"},
               {"status", "True"},
               {"reason", "KubeletReady"},
               {"message", "kubelet is posting ready status"},
               {"lastHeartbeatTime", now},
               {"lastTransitionTime", now}}}},
            {"addresses",
             {{{"type", "InternalIP"}, {"address", NodeHostIp(k)}},
              {{"type", "Hostname"}, {"address", name}}}},
            {"nodeInfo",
             {{"operatingSystem", "linux"},
              {"architecture", "amd64"},
              {"kubeletVersion", "trainsim"},
              {"containerRuntimeVersion", "containerd://trainsim"}}}}}};
}

json TokenRequestBody(int64_t seconds) {
  return {{"apiVersion", "authentication.k8s.io/v1"},
          {"kind", "TokenRequest"},
          {"spec", {{"expirationSeconds", seconds}}}};
}

}  // namespace trainsim
