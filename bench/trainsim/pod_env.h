#pragma once

#include <string>
#include <utility>
#include <vector>

#include "layout.h"

namespace trainsim {

using EnvList = std::vector<std::pair<std::string, std::string>>;

// The environment a Kubeflow operator gives this pod's container:
// TF_CONFIG (TFJob: jobs with PS or a chief, label styles kubeflow and
// tf_config), MASTER_ADDR/MASTER_PORT/RANK/WORLD_SIZE (PyTorchJob: allreduce
// jobs, every label style), and TRAINSIM_STEPS_FILE for program pods. The
// same list goes into the fake API's pod spec and into a program's
// environment. Pure.
EnvList OperatorEnv(const Layout& layout, const SimPod& pod);

// Rank of a pod in its allreduce job: the master (chief) first, then the
// workers; -1 for pods outside an allreduce job.
int AllreduceRank(const SimPod& pod);
int AllreduceWorldSize(const Job& job);
// The job's pods in rank order (allreduce jobs).
std::vector<const SimPod*> RankOrder(const Layout& layout, const Job& job);

// Where a program pod keeps its completed step count (TRAINSIM_STEPS_FILE).
std::string StepsFilePath(const std::string& run_id, const std::string& pod);

// "host:port" of every pod of `role` in the job, comma-separated, by IP
// (there is no DNS in trainsim), as the field story's --ps_hosts flags.
std::string HostList(const Layout& layout, const Job& job, PodRole role);

// Placeholders ${NAME} in a program's argv and env values, per pod. The
// list is documented in docs/trainsim.md "Programs".
const std::vector<std::string>& PlaceholderNames();
// Expands every ${NAME}; throws std::runtime_error on an unknown one.
// `repo` is the repository root (for ${REPO}, ${PYTHON}).
std::string ExpandPlaceholders(const std::string& text, const Layout& layout,
                               const SimPod& pod, const std::string& repo);
// The unknown placeholder names in `text` (for validation).
std::vector<std::string> UnknownPlaceholders(const std::string& text);

}  // namespace trainsim
