#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "trainscope/pod.h"
#include "trainscope/status.h"

namespace trainscope {

// Three label keys that together name a pod's training job, role and index.
// A scheme applies to a pod only when its role label holds a valid role, so
// a lone `name` label never makes a pod a training pod.
struct LabelScheme {
  std::string job_key;
  std::string role_key;
  std::string index_key;
  bool operator==(const LabelScheme&) const = default;
};

// Kubeflow, old tf-operator (tf-job-name, then job-name) and the seed layout
// (name/job/task), in that order of precedence.
std::vector<LabelScheme> DefaultLabelSchemes();

// The --role-labels flag: "job_key,role_key,index_key;..." (schemes in order
// of precedence). Whitespace around keys is ignored; job and index keys may be
// empty ("," placeholders), the role key may not.
Status ParseLabelSchemes(std::string_view text, std::vector<LabelScheme>* out);

struct TrainingIdentity {
  std::string job;
  Role role = Role::kUnknown;
  int index = -1;
  std::string source;  // "labels:<role_key>", "tf_config", "name", ""
};

// `{job}-{role}-{i}`, optionally followed by the random suffixes that Jobs
// ("-x7k2p") and Deployments ("-7d9f8b6c5-x7k2p") append.
bool ParsePodNamePattern(std::string_view pod_name, TrainingIdentity* out);

// TF_CONFIG's task type and index; the job from the pod name when it follows
// the pattern, else from the task's host name in the cluster spec
// ("ctr-ps-0.ctr-ps:2222" -> "ctr"). False when the JSON is malformed or
// names no valid task.
bool ParseTfConfig(std::string_view tf_config, std::string_view pod_name,
                   TrainingIdentity* out);

// Labels (each scheme in order), then TF_CONFIG, then the pod name pattern.
// The first source with a valid role decides the role; a missing job or
// index is then filled from the later sources when they agree on the role.
TrainingIdentity InferTrainingIdentity(const PodInfo& pod,
                                       const std::vector<LabelScheme>& schemes);

// Writes the inferred identity into pod.training_job/role/replica_index.
void ApplyTrainingIdentity(const std::vector<LabelScheme>& schemes,
                           PodInfo* pod);

// What every source publishes: pods that still hold resources (not
// Succeeded/Failed), with their training identity, sorted by namespace and
// name so consumers see a stable order.
PodList PreparePodsForPublish(PodList pods,
                              const std::vector<LabelScheme>& schemes);
// Its steps, for sources that infer identity as pods arrive.
PodList DropFinishedPods(PodList pods);
PodList SortPods(PodList pods);
// Drops what only the node's own pods need (labels, annotations, containers,
// TF_CONFIG, limits), keeping what names a peer: uid, namespace, name, node,
// phase, IPs, hostNetwork and the training identity.
void KeepIdentityOnly(PodInfo* pod);

}  // namespace trainscope
