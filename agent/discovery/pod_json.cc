#include "discovery/pod_json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "discovery/container_status.h"
#include "discovery/json_fields.h"
#include "kube/quantity.h"

namespace trainscope {
namespace {

using json_fields::Join;
using json_fields::OptArray;
using json_fields::OptObject;
using json_fields::OptString;
using json_fields::StringMap;
using json_fields::TypeError;
using nlohmann::json;

// The environment variables the operators of each Kubeflow job kind set and
// discovery/roles reads: MXJob (DMLC_*, MX_CONFIG), PyTorchJob (MASTER_*,
// RANK, WORLD_SIZE, PET_*), MPIJob (K_MPI_JOB_ROLE, OMPI_MCA_*, I_MPI_*).
// Only these are kept: env may hold secrets and need not sit in memory.
bool IsTrainingEnv(std::string_view name) {
  static constexpr std::string_view kExact[] = {
      "MX_CONFIG",  "MASTER_ADDR",   "MASTER_PORT",
      "RANK",       "WORLD_SIZE",    "K_MPI_JOB_ROLE",
      "PET_NNODES", "PET_NODE_RANK", "PET_MASTER_ADDR"};
  static constexpr std::string_view kPrefixes[] = {"DMLC_", "OMPI_MCA_",
                                                   "I_MPI_"};
  for (auto e : kExact) {
    if (name == e) return true;
  }
  for (auto p : kPrefixes) {
    if (name.starts_with(p)) return true;
  }
  return false;
}

// The kind of the controlling owner (the custom resource or batch Job that
// created the pod); absent references are fine, malformed ones are errors.
bool ParseOwnerKind(const json& meta, PodInfo* out, std::string* error) {
  const json* owners = nullptr;
  if (!OptArray(meta, "ownerReferences", "metadata", &owners, error)) {
    return false;
  }
  if (owners == nullptr) return true;
  for (size_t i = 0; i < owners->size(); ++i) {
    const json& o = (*owners)[i];
    const std::string opath =
        "metadata.ownerReferences[" + std::to_string(i) + "]";
    if (!o.is_object()) {
      *error = TypeError(opath, "object", o);
      return false;
    }
    std::string kind;
    if (!OptString(o, "kind", opath, &kind, error)) return false;
    auto controller = o.find("controller");
    const bool is_controller = controller != o.end() &&
                               controller->is_boolean() &&
                               controller->get<bool>();
    if (is_controller || out->owner_kind.empty()) out->owner_kind = kind;
    if (is_controller) break;
  }
  return true;
}

bool ParseMetadata(const json& pod, PodInfo* out, std::string* error) {
  const json* meta = nullptr;
  if (!OptObject(pod, "metadata", "", &meta, error)) return false;
  if (meta == nullptr) {
    *error = "metadata: missing";
    return false;
  }
  const std::string path = "metadata";
  if (!OptString(*meta, "name", path, &out->name, error) ||
      !OptString(*meta, "namespace", path, &out->namespace_name, error) ||
      !OptString(*meta, "uid", path, &out->uid, error) ||
      !StringMap(*meta, "labels", path, &out->labels, error) ||
      !StringMap(*meta, "annotations", path, &out->annotations, error) ||
      !ParseOwnerKind(*meta, out, error)) {
    return false;
  }
  if (out->name.empty()) {
    *error = "metadata.name: missing";
    return false;
  }
  if (out->uid.empty()) {
    *error = "metadata.uid: missing (pod " + out->name + ")";
    return false;
  }
  return true;
}

// Sums one resource over all containers; empty as soon as one container has
// no limit, because then the pod as a whole is unlimited.
struct LimitSum {
  double total = 0;
  bool all_set = true;
  void Add(std::optional<double> value) {
    if (value) {
      total += *value;
    } else {
      all_set = false;
    }
  }
};

bool ParseContainerSpec(const json& c, const std::string& path, PodInfo* out,
                        LimitSum* cpu, LimitSum* memory, std::string* error) {
  if (!c.is_object()) {
    *error = TypeError(path, "object", c);
    return false;
  }
  std::string image;
  if (!OptString(c, "image", path, &image, error)) return false;
  if (!image.empty()) out->images.push_back(std::move(image));
  const json* env = nullptr;
  if (!OptArray(c, "env", path, &env, error)) return false;
  if (env != nullptr) {
    for (size_t i = 0; i < env->size(); ++i) {
      const json& e = (*env)[i];
      const std::string epath = path + ".env[" + std::to_string(i) + "]";
      if (!e.is_object()) {
        *error = TypeError(epath, "object", e);
        return false;
      }
      std::string name, value;
      if (!OptString(e, "name", epath, &name, error) ||
          !OptString(e, "value", epath, &value, error)) {
        return false;
      }
      if (name == "TF_CONFIG" && out->tf_config.empty()) {
        out->tf_config = value;
      } else if (IsTrainingEnv(name) && !value.empty()) {
        out->training_env.emplace(name, value);  // the first one stays
      }
    }
  }
  const json* resources = nullptr;
  const json* limits = nullptr;
  if (!OptObject(c, "resources", path, &resources, error)) return false;
  if (resources != nullptr &&
      !OptObject(*resources, "limits", path + ".resources", &limits, error)) {
    return false;
  }
  std::string cpu_text, memory_text;
  if (limits != nullptr) {
    const std::string lpath = path + ".resources.limits";
    if (!OptString(*limits, "cpu", lpath, &cpu_text, error) ||
        !OptString(*limits, "memory", lpath, &memory_text, error)) {
      return false;
    }
  }
  auto quantity = [&](const std::string& text, const char* what,
                      std::optional<double>* value) {
    if (text.empty()) return true;
    *value = ParseQuantity(text);
    if (!*value) {
      *error = path + ".resources.limits." + what + ": bad quantity \"" + text +
               "\"";
      return false;
    }
    return true;
  };
  std::optional<double> cpu_value, memory_value;
  if (!quantity(cpu_text, "cpu", &cpu_value) ||
      !quantity(memory_text, "memory", &memory_value)) {
    return false;
  }
  cpu->Add(cpu_value);
  memory->Add(memory_value);
  return true;
}

bool ParseSpec(const json& pod, PodInfo* out, std::string* error) {
  const json* spec = nullptr;
  if (!OptObject(pod, "spec", "", &spec, error)) return false;
  if (spec == nullptr) return true;
  if (!OptString(*spec, "nodeName", "spec", &out->node, error)) return false;
  if (auto it = spec->find("hostNetwork");
      it != spec->end() && !it->is_null()) {
    if (!it->is_boolean()) {
      *error = TypeError("spec.hostNetwork", "boolean", *it);
      return false;
    }
    out->host_network = it->get<bool>();
  }
  const json* containers = nullptr;
  if (!OptArray(*spec, "containers", "spec", &containers, error)) {
    return false;
  }
  if (containers == nullptr || containers->empty()) return true;
  LimitSum cpu, memory;
  for (size_t i = 0; i < containers->size(); ++i) {
    if (!ParseContainerSpec((*containers)[i],
                            "spec.containers[" + std::to_string(i) + "]", out,
                            &cpu, &memory, error)) {
      return false;
    }
  }
  if (cpu.all_set) out->spec_cpu_limit_cores = cpu.total;
  // A limit beyond what the kubelet represents (int64 bytes) is no limit
  // any node enforces, and converting it would be undefined behaviour
  // (found by fuzz.pod_list: "memory: 1e42").
  constexpr double kMaxLimitBytes =
      static_cast<double>(std::numeric_limits<int64_t>::max());
  if (memory.all_set && memory.total <= kMaxLimitBytes) {
    out->spec_memory_limit_bytes =
        static_cast<uint64_t>(std::ceil(memory.total));
  }
  return true;
}

bool ParseStatus(const json& pod, PodInfo* out, std::string* error) {
  const json* status = nullptr;
  if (!OptObject(pod, "status", "", &status, error)) return false;
  if (status == nullptr) return true;
  if (!OptString(*status, "phase", "status", &out->phase, error) ||
      !OptString(*status, "podIP", "status", &out->pod_ip, error)) {
    return false;
  }
  const json* ips = nullptr;
  if (!OptArray(*status, "podIPs", "status", &ips, error)) return false;
  if (ips != nullptr) {
    for (size_t i = 0; i < ips->size(); ++i) {
      const std::string ipath = "status.podIPs[" + std::to_string(i) + "]";
      if (!(*ips)[i].is_object()) {
        *error = TypeError(ipath, "object", (*ips)[i]);
        return false;
      }
      std::string ip;
      if (!OptString((*ips)[i], "ip", ipath, &ip, error)) return false;
      if (!ip.empty()) out->pod_ips.push_back(ip);
    }
  }
  if (out->pod_ips.empty() && !out->pod_ip.empty()) {
    out->pod_ips.push_back(out->pod_ip);
  }
  // initContainerStatuses are deliberately ignored: init containers have
  // exited by the time a pod runs and hold no resources worth sampling.
  const json* statuses = nullptr;
  if (!OptArray(*status, "containerStatuses", "status", &statuses, error)) {
    return false;
  }
  if (statuses == nullptr) return true;
  for (size_t i = 0; i < statuses->size(); ++i) {
    const json& s = (*statuses)[i];
    const std::string spath =
        "status.containerStatuses[" + std::to_string(i) + "]";
    if (!s.is_object()) {
      *error = TypeError(spath, "object", s);
      return false;
    }
    ContainerInfo c;
    std::string container_id;
    if (!OptString(s, "name", spath, &c.name, error) ||
        !OptString(s, "containerID", spath, &container_id, error)) {
      return false;
    }
    SplitContainerId(container_id, &c.runtime, &c.id);
    if (!ParseContainerState(s, spath, &c, error)) return false;
    out->containers.push_back(std::move(c));
  }
  return true;
}

}  // namespace

void SplitContainerId(std::string_view container_id, std::string* runtime,
                      std::string* id) {
  runtime->clear();
  const auto sep = container_id.find("://");
  if (sep == std::string_view::npos) {
    *id = std::string(container_id);
    return;
  }
  *runtime = std::string(container_id.substr(0, sep));
  *id = std::string(container_id.substr(sep + 3));
}

Status ParsePod(const nlohmann::json& pod, PodInfo* out) {
  *out = PodInfo{};
  if (!pod.is_object()) {
    return Status::Error(TypeError("pod", "object", pod));
  }
  std::string error;
  if (!ParseMetadata(pod, out, &error) || !ParseSpec(pod, out, &error) ||
      !ParseStatus(pod, out, &error)) {
    if (!out->name.empty() && error.find(out->name) == std::string::npos) {
      error = "pod " + out->namespace_name + "/" + out->name + ": " + error;
    }
    return Status::Error(error);
  }
  return Status::Ok();
}

Status ParsePodListJson(const nlohmann::json& list, PodList* out,
                        std::string* resource_version,
                        std::string* continue_token) {
  out->clear();
  if (!list.is_object()) {
    return Status::Error(TypeError("PodList", "object", list));
  }
  std::string error;
  if (resource_version != nullptr || continue_token != nullptr) {
    std::string ignored_rv, ignored_continue;
    std::string* rv = resource_version ? resource_version : &ignored_rv;
    std::string* next = continue_token ? continue_token : &ignored_continue;
    rv->clear();
    next->clear();
    const json* meta = nullptr;
    if (!OptObject(list, "metadata", "", &meta, &error) ||
        (meta != nullptr &&
         (!OptString(*meta, "resourceVersion", "metadata", rv, &error) ||
          !OptString(*meta, "continue", "metadata", next, &error)))) {
      return Status::Error("PodList " + error);
    }
  }
  const json* items = nullptr;
  if (!OptArray(list, "items", "", &items, &error)) {
    return Status::Error("PodList " + error);
  }
  if (items == nullptr) return Status::Ok();
  out->reserve(items->size());
  for (size_t i = 0; i < items->size(); ++i) {
    PodInfo pod;
    Status st = ParsePod((*items)[i], &pod);
    if (!st.ok()) {
      return Status::Error("PodList items[" + std::to_string(i) +
                           "]: " + st.message());
    }
    out->push_back(std::move(pod));
  }
  return Status::Ok();
}

Status ParsePodList(std::string_view body, PodList* out,
                    std::string* resource_version,
                    std::string* continue_token) {
  out->clear();
  json list;
  try {
    list = json::parse(body);
  } catch (const json::exception& e) {
    // Not only parse_error: a number beyond double's range is out_of_range
    // (406), which escaped and ended the agent (found by fuzz.pod_list).
    return Status::Error(std::string("PodList: malformed JSON: ") + e.what());
  }
  return ParsePodListJson(list, out, resource_version, continue_token);
}

}  // namespace trainscope
