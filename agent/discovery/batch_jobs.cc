#include "discovery/batch_jobs.h"

#include <algorithm>
#include <charconv>
#include <string>

#include "trainscope/ascii_case.h"

namespace trainscope {
namespace {

// Kubeflow Trainer pkg/constants/constants.go: the replicated job of the
// trainer nodes (Node).
constexpr std::string_view kTrainerNodeJob = "node";
// The Trainer's torch plugin sets these on every node (PET_NODE_RANK too,
// but from a fieldRef, which discovery does not read).
constexpr std::string_view kTrainerTorchEnv[] = {"PET_NNODES",
                                                 "PET_MASTER_ADDR"};

// Non-negative decimal integer, the whole text; -1 otherwise.
int ParseIndex(std::string_view text) {
  int value = -1;
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      value < 0) {
    return -1;
  }
  return value;
}

std::string_view Find(const std::map<std::string, std::string>& map,
                      std::string_view key) {
  auto it = map.find(std::string(key));
  return it == map.end() ? std::string_view() : std::string_view(it->second);
}

// The label, else the annotation of the same key (controllers set both;
// older ones only the annotation).
std::string_view LabelOrAnnotation(const PodInfo& pod, std::string_view key) {
  std::string_view value = Find(pod.labels, key);
  return value.empty() ? Find(pod.annotations, key) : value;
}

// Whether the identity came from the label scheme with this role key
// (roles.cc names such sources "labels:<role_key>").
bool IsSource(const TrainingIdentity& id, std::string_view role_key) {
  return id.source == "labels:" + std::string(role_key);
}

// `<prefix>-<digits>` followed by nothing or by "-<rest>"; the digits.
int IndexAfter(std::string_view name, std::string_view prefix,
               std::string_view* rest) {
  if (!name.starts_with(prefix) || name.size() <= prefix.size() ||
      name[prefix.size()] != '-') {
    return -1;
  }
  name.remove_prefix(prefix.size() + 1);
  const size_t dash = name.find('-');
  *rest = dash == std::string_view::npos ? std::string_view()
                                         : name.substr(dash + 1);
  return ParseIndex(name.substr(0, dash));
}

void CompleteJobSet(const PodInfo& pod, TrainingIdentity* id) {
  const int replicas =
      ParseIndex(LabelOrAnnotation(pod, kReplicatedJobReplicasKey));
  if (replicas > 1) {
    id->index = -1;
    return;
  }
  if (id->index < 0) {
    id->index = ParseIndex(LabelOrAnnotation(pod, kJobCompletionIndexKey));
  }
  if (id->index < 0) {
    id->index = JobSetPodIndexFromName(pod.name, id->job,
                                       Find(pod.labels, kReplicatedJobNameKey));
  }
}

void CompleteVolcano(const PodInfo& pod, TrainingIdentity* id) {
  if (id->index < 0) {
    id->index = ParseIndex(Find(pod.annotations, kVolcanoTaskIndexKey));
  }
  if (id->index < 0 && !id->job.empty()) {
    // volcano pkg/controllers/job/helpers/helpers.go PodNameFmt "%s-%s-%d".
    const std::string prefix =
        id->job + "-" + std::string(Find(pod.labels, kVolcanoTaskSpecKey));
    std::string_view rest;
    const int index = IndexAfter(pod.name, prefix, &rest);
    if (rest.empty()) id->index = index;
  }
}

}  // namespace

std::optional<Role> RoleOfLabelValue(std::string_view role_key,
                                     std::string_view value) {
  if (auto role = ParseRole(value)) return role;
  const std::string lower = AsciiLower(value);
  if (role_key == kReplicatedJobNameKey) {
    if (lower == kTrainerNodeJob) return Role::kWorker;
    if (lower.size() > 1 && lower.back() == 's') {
      return ParseRole(std::string_view(lower).substr(0, lower.size() - 1));
    }
  }
  if (role_key == kVolcanoTaskSpecKey) {
    if (lower == "mpimaster") return Role::kLauncher;
    if (lower == "mpiworker") return Role::kWorker;
  }
  return std::nullopt;
}

int JobSetPodIndexFromName(std::string_view pod_name,
                           std::string_view jobset_name,
                           std::string_view replicated_job) {
  // kubernetes-sigs/jobset pkg/util/placement/placement.go: the Job is
  // `<jobset>-<replicatedjob>-<jobIndex>`; the Job controller names its
  // pods `<job>-<completionIndex>-<random>`.
  if (jobset_name.empty() || replicated_job.empty()) return -1;
  const std::string prefix =
      std::string(jobset_name) + "-" + std::string(replicated_job);
  std::string_view rest;
  if (IndexAfter(pod_name, prefix, &rest) < 0) return -1;
  const size_t dash = rest.find('-');
  if (dash == std::string_view::npos || dash + 1 == rest.size()) return -1;
  return ParseIndex(rest.substr(0, dash));
}

void CompleteBatchJobIdentity(const PodInfo& pod, TrainingIdentity* id) {
  if (IsSource(*id, kReplicatedJobNameKey)) CompleteJobSet(pod, id);
  if (IsSource(*id, kVolcanoTaskSpecKey)) CompleteVolcano(pod, id);
}

std::optional<JobKind> BatchJobKind(const PodInfo& pod,
                                    const TrainingIdentity& id) {
  if (IsSource(id, kVolcanoTaskSpecKey)) return JobKind::kVolcanoJob;
  if (!IsSource(id, kReplicatedJobNameKey)) return std::nullopt;
  // A TrainJob's JobSet: the Trainer's `node` replicated job, or the
  // torchrun environment its torch plugin sets. Its MPI `launcher` shows
  // nothing of the Trainer (plain JobSets name launchers so too) and stays
  // a JobSet.
  const std::string rjob = AsciiLower(Find(pod.labels, kReplicatedJobNameKey));
  const bool torch_env =
      std::all_of(std::begin(kTrainerTorchEnv), std::end(kTrainerTorchEnv),
                  [&](std::string_view key) {
                    return pod.training_env.count(std::string(key)) > 0;
                  });
  if (rjob == kTrainerNodeJob || torch_env) return JobKind::kTrainJob;
  return JobKind::kJobSet;
}

}  // namespace trainscope
