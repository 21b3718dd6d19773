#include "discovery/roles.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <nlohmann/json.hpp>
#include <tuple>

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
  std::string lower(token);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  for (auto name : kNames) {
    if (lower == name) return ParseRole(name);
  }
  return std::nullopt;
}

bool FromLabels(const PodInfo& pod, const LabelScheme& scheme,
                TrainingIdentity* out) {
  auto role_it = pod.labels.find(scheme.role_key);
  if (role_it == pod.labels.end()) return false;
  auto role = ParseRole(Trim(role_it->second));
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
      {"tf-job-name", "tf-replica-type", "tf-replica-index"},
      {"job-name", "tf-replica-type", "tf-replica-index"},
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

bool ParsePodNamePattern(std::string_view pod_name, TrainingIdentity* out) {
  auto tokens = Split(pod_name, '-');
  const size_t n = tokens.size();
  // Rightmost "<role>-<digits>" followed only by generated suffixes wins, so
  // a job named "ps-worker-exp" still parses.
  for (size_t k = n < 2 ? 0 : n - 2; n >= 3 && k >= 1; --k) {
    const size_t trailing = n - (k + 2);
    if (trailing > 2) break;
    bool suffixes_ok = true;
    for (size_t t = k + 2; t < n; ++t) {
      suffixes_ok = suffixes_ok && IsGeneratedSuffix(tokens[t]);
    }
    auto role = NameRole(tokens[k]);
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

bool ParseTfConfig(std::string_view tf_config, std::string_view pod_name,
                   TrainingIdentity* out) {
  if (Trim(tf_config).empty()) return false;
  auto config = nlohmann::json::parse(tf_config, nullptr, false);
  if (config.is_discarded() || !config.is_object()) return false;
  auto task = config.find("task");
  if (task == config.end() || !task->is_object()) return false;
  auto type = task->find("type");
  if (type == task->end() || !type->is_string()) return false;
  auto role = NameRole(type->get<std::string>());
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
  id.source = "tf_config";
  TrainingIdentity from_name;
  if (ParsePodNamePattern(pod_name, &from_name)) {
    id.job = from_name.job;
  } else if (auto cluster = config.find("cluster");
             cluster != config.end() && cluster->is_object()) {
    // Prefer this task's own address, then any address in the spec.
    std::vector<std::string> hosts;
    auto own = cluster->find(type->get<std::string>());
    if (own != cluster->end() && own->is_array() && index >= 0 &&
        static_cast<size_t>(index) < own->size() && (*own)[index].is_string()) {
      hosts.push_back((*own)[index].get<std::string>());
    }
    for (const auto& [name, addresses] : cluster->items()) {
      if (!addresses.is_array()) continue;
      for (const auto& a : addresses) {
        if (a.is_string()) hosts.push_back(a.get<std::string>());
      }
    }
    for (const auto& host : hosts) {
      TrainingIdentity from_host;
      if (ParsePodNamePattern(HostLabel(host), &from_host)) {
        id.job = from_host.job;
        break;
      }
    }
  }
  *out = std::move(id);
  return true;
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
  return result;
}

void ApplyTrainingIdentity(const std::vector<LabelScheme>& schemes,
                           PodInfo* pod) {
  TrainingIdentity id = InferTrainingIdentity(*pod, schemes);
  pod->training_job = std::move(id.job);
  pod->role = id.role;
  pod->replica_index = id.index;
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
  *pod = std::move(slim);
}

}  // namespace trainscope
