#pragma once

// Pods of the batch-job layers that run training without a Kubeflow v1
// operator: JobSet (and Kubeflow Trainer v2, whose TrainJob runs as a
// JobSet) and Volcano jobs. The label keys are the ones those controllers
// set on every pod they create (docs/discovery.md names the source files).

#include <optional>
#include <string_view>

#include "discovery/roles.h"
#include "trainscope/pod.h"

namespace trainscope {

// kubernetes-sigs/jobset api/jobset/v1alpha2/jobset_types.go.
inline constexpr std::string_view kJobSetNameKey =
    "jobset.sigs.k8s.io/jobset-name";
inline constexpr std::string_view kReplicatedJobNameKey =
    "jobset.sigs.k8s.io/replicatedjob-name";
inline constexpr std::string_view kReplicatedJobReplicasKey =
    "jobset.sigs.k8s.io/replicatedjob-replicas";
inline constexpr std::string_view kJobSetJobIndexKey =
    "jobset.sigs.k8s.io/job-index";
// The batch Job controller's index of an Indexed Job's pod: a label since
// Kubernetes 1.28, an annotation since 1.21.
inline constexpr std::string_view kJobCompletionIndexKey =
    "batch.kubernetes.io/job-completion-index";
// volcano-sh/volcano staging/src/volcano.sh/apis/pkg/apis/batch/v1alpha1/
// labels.go (set as labels and annotations by job_controller_util.go).
inline constexpr std::string_view kVolcanoJobNameKey = "volcano.sh/job-name";
inline constexpr std::string_view kVolcanoTaskSpecKey = "volcano.sh/task-spec";
inline constexpr std::string_view kVolcanoTaskIndexKey =
    "volcano.sh/task-index";

// The role a label value names under role_key: ParseRole, plus the names
// only that key's controller uses: under the JobSet replicated-job key the
// Kubeflow Trainer's `node` (every torchrun node trains) and plural names
// ("workers", JobSet's own PyTorch example); under Volcano's task-spec the
// `mpimaster`/`mpiworker` of Volcano's MPI example.
std::optional<Role> RoleOfLabelValue(std::string_view role_key,
                                     std::string_view value);

// Finishes an identity found through the JobSet or Volcano labels.
// JobSet: the rank is the Indexed Job's completion index (label, else
// annotation, else the name
// `<jobset>-<replicatedjob>-<jobIndex>-<podIndex>-<suffix>`) when its
// replicated job has one Job; with several Jobs no pod shows how many pods
// each Job runs, so the rank stays unknown. Volcano: the task index label,
// else annotation (older releases), else the name `<job>-<task>-<index>`.
void CompleteBatchJobIdentity(const PodInfo& pod, TrainingIdentity* id);

// The completion index in a JobSet pod name for the given replicated job;
// -1 when the name does not follow the pattern.
int JobSetPodIndexFromName(std::string_view pod_name,
                           std::string_view jobset_name,
                           std::string_view replicated_job);

// TrainJob, JobSet or VolcanoJob for identities found through those
// labels; nullopt for every other source.
std::optional<JobKind> BatchJobKind(const PodInfo& pod,
                                    const TrainingIdentity& id);

}  // namespace trainscope
