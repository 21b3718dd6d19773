#include "discovery/roles.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <tuple>

#include "discovery/batch_jobs.h"
#include "trainscope/ascii_case.h"

namespace trainscope {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) {
    s.remove_prefix(1);
  }
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.remove_suffix(1);
  }
  return s;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    parts.push_back(s.substr(start, pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return parts;
}

// Non-negative decimal integer, the whole text.
int ParseIndex(std::string_view text) {
  text = Trim(text);
  if (text.empty()) return -1;
  int value = -1;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || ptr != text.data() + text.size() || value < 0) {
    return -1;
  }
  return value;
}

bool IsGeneratedSuffix(std::string_view token) {
  if (token.size() < 5 || token.size() > 10) return false;
  return std::all_of(token.begin(), token.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) ||
           std::isdigit(static_cast<unsigned char>(c));
  });
}

// Only the five TF task types count in names; ParseRole's aliases are for
// labels, where operators spell things their own way.
std::optional<Role> NameRole(std::string_view token) {
  static constexpr std::string_view kNames[] = {"ps", "worker", "chief",
                                                "master", "evaluator"};
  const std::string lower = AsciiLower(token);
  for (auto name : kNames) {
    if (lower == name) return ParseRole(name);
  }
  return std::nullopt;
}

bool FromLabels(const PodInfo& pod, const LabelScheme& scheme,
                TrainingIdentity* out) {
  auto role_it = pod.labels.find(scheme.role_key);
  if (role_it == pod.labels.end()) return false;
  auto role = RoleOfLabelValue(scheme.role_key, Trim(role_it->second));
  if (!role) return false;
  *out = TrainingIdentity{};
  out->role = *role;
  out->source = "labels:" + scheme.role_key;
  if (!scheme.job_key.empty()) {
    if (auto it = pod.labels.find(scheme.job_key); it != pod.labels.end()) {
      out->job = std::string(Trim(it->second));
    }
  }
  if (!scheme.index_key.empty()) {
    if (auto it = pod.labels.find(scheme.index_key); it != pod.labels.end()) {
      out->index = ParseIndex(it->second);
    }
  }
  return true;
}

// First DNS label of "host:port" / "host.svc.cluster.local:port".
std::string_view HostLabel(std::string_view address) {
  address = address.substr(0, address.find(':'));
  return address.substr(0, address.find('.'));
}

}  // namespace

std::vector<LabelScheme> DefaultLabelSchemes() {
  return {
      {"training.kubeflow.org/job-name", "training.kubeflow.org/replica-type",
       "training.kubeflow.org/replica-index"},
      {"training.kubeflow.org/job-name", "training.kubeflow.org/job-role",
       "training.kubeflow.org/replica-index"},
      {"tf-job-name", "tf-replica-type", "tf-replica-index"},
      {"job-name", "tf-replica-type", "tf-replica-index"},
      {"job-name", "replica-type", "replica-index"},
      {"pytorch-job-name", "pytorch-replica-type", "pytorch-replica-index"},
      {"mpi-job-name", "mpi-job-role", ""},
      {std::string(kJobSetNameKey), std::string(kReplicatedJobNameKey),
       std::string(kJobCompletionIndexKey)},
      {std::string(kVolcanoJobNameKey), std::string(kVolcanoTaskSpecKey),
       std::string(kVolcanoTaskIndexKey)},
      {"name", "job", "task"},
  };
}

Status ParseLabelSchemes(std::string_view text, std::vector<LabelScheme>* out) {
  std::vector<LabelScheme> schemes;
  for (std::string_view part : Split(text, ';')) {
    if (Trim(part).empty()) continue;  // tolerate a trailing ';'
    auto keys = Split(part, ',');
    if (keys.size() != 3) {
      return Status::Error("role labels: \"" + std::string(Trim(part)) +
                           "\" must be job_key,role_key,index_key");
    }
    LabelScheme scheme{std::string(Trim(keys[0])), std::string(Trim(keys[1])),
                       std::string(Trim(keys[2]))};
    if (scheme.role_key.empty()) {
      return Status::Error("role labels: \"" + std::string(Trim(part)) +
                           "\" has an empty role key");
    }
    schemes.push_back(std::move(scheme));
  }
  if (schemes.empty()) {
    return Status::Error("role labels: no scheme in \"" + std::string(text) +
                         "\"");
  }
  *out = std::move(schemes);
  return Status::Ok();
}

namespace {

// `{job}-launcher` with at most one generated suffix (the launcher runs as
// a batch Job in mpi-operator v2, as a plain pod in training-operator).
bool ParseLauncherName(const std::vector<std::string_view>& tokens,
                       std::string_view pod_name, TrainingIdentity* out) {
  const size_t n = tokens.size();
  for (size_t k = n - 1; n >= 2 && k >= 1 && k + 2 >= n; --k) {
    if (tokens[k] != "launcher") continue;
    if (k + 1 < n && !IsGeneratedSuffix(tokens[k + 1])) continue;
    const size_t job_len =
        static_cast<size_t>(tokens[k].data() - pod_name.data());
    if (job_len < 2) return false;
    out->job = std::string(pod_name.substr(0, job_len - 1));
    out->role = Role::kLauncher;
    out->index = -1;
    out->source = "name";
    return true;
  }
  return false;
}

// Rightmost "<role>-<digits>" followed only by generated suffixes, where
// role_of names the role token; so a job named "ps-worker-exp" still parses.
template <typename RoleOf>
bool MatchRoleIndex(std::string_view pod_name, RoleOf role_of,
                    TrainingIdentity* out) {
  auto tokens = Split(pod_name, '-');
  const size_t n = tokens.size();
  for (size_t k = n < 2 ? 0 : n - 2; n >= 3 && k >= 1; --k) {
    const size_t trailing = n - (k + 2);
    if (trailing > 2) break;
    bool suffixes_ok = true;
    for (size_t t = k + 2; t < n; ++t) {
      suffixes_ok = suffixes_ok && IsGeneratedSuffix(tokens[t]);
    }
    std::optional<Role> role = role_of(tokens[k]);
    int index = ParseIndex(tokens[k + 1]);
    if (suffixes_ok && role && index >= 0) {
      // Job is everything before the role token.
      size_t job_len = static_cast<size_t>(tokens[k].data() - pod_name.data());
      if (job_len < 2) return false;
      out->job = std::string(pod_name.substr(0, job_len - 1));
      out->role = *role;
      out->index = index;
      out->source = "name";
      return true;
    }
  }
  return false;
}

// The job of a pod whose role another source already knows, from its name
// `{job}-{replica_type}-{i}` (MXJob's "server" is no name role by itself).
std::string JobFromName(std::string_view pod_name,
                        std::string_view replica_type) {
  TrainingIdentity id;
  const std::string want = AsciiLower(replica_type);
  if (MatchRoleIndex(
          pod_name,
          [&](std::string_view token) -> std::optional<Role> {
            if (AsciiLower(token) == want) return Role::kUnknown;
            return std::nullopt;
          },
          &id)) {
    return id.job;
  }
  if (ParsePodNamePattern(pod_name, &id)) return id.job;
  return "";
}

// MX_CONFIG / DMLC_ROLE / K_MPI_JOB_ROLE: operator-set environment that
// names the role directly.
bool FromEnv(const PodInfo& pod, const char* key, TrainingIdentity* out) {
  auto it = pod.training_env.find(key);
  if (it == pod.training_env.end()) return false;
  auto role = ParseRole(Trim(it->second));
  if (!role) return false;
  *out = TrainingIdentity{};
  out->role = *role;
  out->source = std::string("env:") + key;
  out->job = JobFromName(pod.name, Trim(it->second));
  return true;
}

}  // namespace

bool ParsePodNamePattern(std::string_view pod_name, TrainingIdentity* out) {
  if (MatchRoleIndex(pod_name, NameRole, out)) return true;
  return ParseLauncherName(Split(pod_name, '-'), pod_name, out);
}

namespace {

// The address text of one cluster-spec entry: TF_CONFIG lists
// "host:port" strings, MX_CONFIG {"url": host, "port": n} objects.
std::string AddressOf(const nlohmann::json& entry) {
  if (entry.is_string()) return entry.get<std::string>();
  if (entry.is_object()) {
    auto url = entry.find("url");
    if (url != entry.end() && url->is_string()) return url->get<std::string>();
  }
  return "";
}

// TF_CONFIG and MX_CONFIG share their shape: {"cluster": {type: [addr..]},
// "task": {"type", "index"}}. role_of maps the task type to a role.
template <typename RoleOf>
bool ParseTaskConfig(std::string_view text, std::string_view pod_name,
                     const char* source, RoleOf role_of,
                     TrainingIdentity* out) {
  if (Trim(text).empty()) return false;
  auto config = nlohmann::json::parse(text, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return false;
  auto task = config.find("task");
  if (task == config.end() || !task->is_object()) return false;
  auto type = task->find("type");
  if (type == task->end() || !type->is_string()) return false;
  const std::string type_name = type->get<std::string>();
  std::optional<Role> role = role_of(type_name);
  if (!role) return false;
  int index = -1;
  if (auto it = task->find("index"); it != task->end()) {
    if (it->is_number_integer() && it->get<int64_t>() >= 0) {
      index = static_cast<int>(it->get<int64_t>());
    } else if (it->is_string()) {
      index = ParseIndex(it->get<std::string>());
    }
  }
  TrainingIdentity id;
  id.role = *role;
  id.index = index;
  id.source = source;
  id.job = JobFromName(pod_name, type_name);
  if (auto cluster = config.find("cluster");
      id.job.empty() && cluster != config.end() && cluster->is_object()) {
    // Prefer this task's own address, then any address in the spec.
    std::vector<std::pair<std::string, std::string>> hosts;  // type, address
    auto own = cluster->find(type_name);
    if (own != cluster->end() && own->is_array() && index >= 0 &&
        static_cast<size_t>(index) < own->size()) {
      hosts.emplace_back(type_name, AddressOf((*own)[index]));
    }
    for (const auto& [name, addresses] : cluster->items()) {
      if (!addresses.is_array()) continue;
      for (const auto& a : addresses) hosts.emplace_back(name, AddressOf(a));
    }
    for (const auto& [host_type, host] : hosts) {
      id.job = JobFromName(HostLabel(host), host_type);
      if (!id.job.empty()) break;
    }
  }
  *out = std::move(id);
  return true;
}

}  // namespace

bool ParseTfConfig(std::string_view tf_config, std::string_view pod_name,
                   TrainingIdentity* out) {
  return ParseTaskConfig(tf_config, pod_name, "tf_config", NameRole, out);
}

bool ParseMxConfig(std::string_view mx_config, std::string_view pod_name,
                   TrainingIdentity* out) {
  return ParseTaskConfig(
      mx_config, pod_name, "mx_config",
      [](std::string_view type) { return ParseRole(type); }, out);
}

TrainingIdentity InferTrainingIdentity(
    const PodInfo& pod, const std::vector<LabelScheme>& schemes) {
  std::vector<TrainingIdentity> candidates;
  for (const auto& scheme : schemes) {
    TrainingIdentity id;
    if (FromLabels(pod, scheme, &id)) candidates.push_back(std::move(id));
  }
  if (TrainingIdentity id; ParseTfConfig(pod.tf_config, pod.name, &id)) {
    candidates.push_back(std::move(id));
  }
  if (auto mx = pod.training_env.find("MX_CONFIG");
      mx != pod.training_env.end()) {
    if (TrainingIdentity id; ParseMxConfig(mx->second, pod.name, &id)) {
      candidates.push_back(std::move(id));
    }
  }
  for (const char* key : {"DMLC_ROLE", "K_MPI_JOB_ROLE"}) {
    if (TrainingIdentity id; FromEnv(pod, key, &id)) {
      candidates.push_back(std::move(id));
    }
  }
  if (TrainingIdentity id; ParsePodNamePattern(pod.name, &id)) {
    candidates.push_back(std::move(id));
  }
  if (candidates.empty()) return {};
  TrainingIdentity result = candidates.front();
  for (size_t i = 1; i < candidates.size(); ++i) {
    const auto& c = candidates[i];
    if (c.role != result.role) continue;
    if (result.job.empty()) result.job = c.job;
    if (result.index < 0) result.index = c.index;
  }
  CompleteBatchJobIdentity(pod, &result);
  result.job_kind = InferJobKind(pod, result);
  result.framework = InferFramework(pod, result);
  return result;
}

void ApplyTrainingIdentity(const std::vector<LabelScheme>& schemes,
                           PodInfo* pod) {
  TrainingIdentity id = InferTrainingIdentity(*pod, schemes);
  pod->training_job = std::move(id.job);
  pod->role = id.role;
  pod->replica_index = id.index;
  pod->job_kind = id.job_kind;
  pod->framework = id.framework;
}

PodList DropFinishedPods(PodList pods) {
  // Finished pods keep no processes or cgroups; sampling them only produces
  // stale series.
  std::erase_if(pods, [](const PodInfo& p) {
    return p.phase == "Succeeded" || p.phase == "Failed";
  });
  return pods;
}

PodList SortPods(PodList pods) {
  std::sort(pods.begin(), pods.end(), [](const PodInfo& a, const PodInfo& b) {
    return std::tie(a.namespace_name, a.name, a.uid) <
           std::tie(b.namespace_name, b.name, b.uid);
  });
  return pods;
}

PodList PreparePodsForPublish(PodList pods,
                              const std::vector<LabelScheme>& schemes) {
  pods = DropFinishedPods(std::move(pods));
  for (auto& pod : pods) ApplyTrainingIdentity(schemes, &pod);
  return SortPods(std::move(pods));
}

void KeepIdentityOnly(PodInfo* pod) {
  PodInfo slim;
  slim.uid = std::move(pod->uid);
  slim.namespace_name = std::move(pod->namespace_name);
  slim.name = std::move(pod->name);
  slim.node = std::move(pod->node);
  slim.phase = std::move(pod->phase);
  slim.pod_ip = std::move(pod->pod_ip);
  slim.pod_ips = std::move(pod->pod_ips);
  slim.host_network = pod->host_network;
  slim.training_job = std::move(pod->training_job);
  slim.role = pod->role;
  slim.replica_index = pod->replica_index;
  slim.job_kind = pod->job_kind;
  slim.framework = pod->framework;
  *pod = std::move(slim);
}

}  // namespace trainscope
