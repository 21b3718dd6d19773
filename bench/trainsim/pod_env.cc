#include "pod_env.h"

#include <stdexcept>

#include "fault_gate.h"
#include "pod_json.h"

namespace trainsim {

int AllreduceRank(const SimPod& pod) {
  if (pod.job->kind != JobKind::kAllreduce) return -1;
  if (pod.role == PodRole::kMaster) return pod.index;
  if (pod.role == PodRole::kWorker) return pod.job->chief + pod.index;
  return -1;
}

int AllreduceWorldSize(const Job& job) { return job.chief + job.workers; }

std::vector<const SimPod*> RankOrder(const Layout& layout, const Job& job) {
  std::vector<const SimPod*> ranks(AllreduceWorldSize(job), nullptr);
  for (const SimPod& p : layout.pods) {
    if (p.job != &job) continue;
    int r = AllreduceRank(p);
    if (r >= 0 && r < static_cast<int>(ranks.size())) ranks[r] = &p;
  }
  return ranks;
}

std::string StepsFilePath(const std::string& run_id, const std::string& pod) {
  return "/run/trainsim/" + run_id + "/steps/" + pod;
}

std::string HostList(const Layout& layout, const Job& job, PodRole role) {
  std::string out;
  for (const SimPod& p : layout.pods)
    if (p.job == &job && p.role == role)
      out += (out.empty() ? "" : ",") + p.ip + ":" + std::to_string(job.port);
  return out;
}

EnvList OperatorEnv(const Layout& layout, const SimPod& pod) {
  const Job& job = *pod.job;
  EnvList env;
  const bool operator_style = job.labels == LabelStyle::kKubeflow ||
                              job.labels == LabelStyle::kTfConfig;
  if (job.kind == JobKind::kAllreduce) {
    // PyTorchJob: every rank learns the rendezvous from its environment.
    const SimPod* master = RankOrder(layout, job).front();
    env.emplace_back("MASTER_ADDR", master ? master->ip : "");
    env.emplace_back("MASTER_PORT", std::to_string(job.port));
    env.emplace_back("RANK", std::to_string(AllreduceRank(pod)));
    env.emplace_back("WORLD_SIZE", std::to_string(AllreduceWorldSize(job)));
  } else if (operator_style) {
    env.emplace_back("TF_CONFIG", TfConfig(layout, pod));
  }
  if (job.program) {
    env.emplace_back("TRAINSIM_STEPS_FILE",
                     StepsFilePath(layout.run_id, pod.name));
    // The hang and checkpoint faults' orders (fault_gate.h).
    env.emplace_back("TRAINSIM_FAULT_FILE",
                     FaultFilePath(layout.run_id, pod.name));
  }
  return env;
}

const std::vector<std::string>& PlaceholderNames() {
  static const std::vector<std::string> names = {
      "POD_NAME",     "NAMESPACE",   "JOB_NAME",   "ROLE", "INDEX",
      "RANK",         "WORLD_SIZE",  "POD_IP",     "PORT", "PS_HOSTS",
      "WORKER_HOSTS", "CHIEF_HOSTS", "STEPS_FILE", "REPO", "PYTHON"};
  return names;
}

namespace {

// Calls f(name) for each ${name} in text; returns text with each replaced.
template <typename F>
std::string ForEachPlaceholder(const std::string& text, F f) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = text.find("${", pos);
    size_t close = open == std::string::npos ? open : text.find('}', open);
    if (close == std::string::npos) {
      out += text.substr(pos);
      return out;
    }
    out += text.substr(pos, open - pos);
    out += f(text.substr(open + 2, close - open - 2));
    pos = close + 1;
  }
}

bool Known(const std::string& name) {
  for (const std::string& n : PlaceholderNames())
    if (n == name) return true;
  return false;
}

}  // namespace

std::vector<std::string> UnknownPlaceholders(const std::string& text) {
  std::vector<std::string> unknown;
  ForEachPlaceholder(text, [&](const std::string& name) {
    if (!Known(name)) unknown.push_back(name);
    return std::string();
  });
  return unknown;
}

std::string ExpandPlaceholders(const std::string& text, const Layout& layout,
                               const SimPod& pod, const std::string& repo) {
  const Job& job = *pod.job;
  return ForEachPlaceholder(text, [&](const std::string& name) -> std::string {
    if (name == "POD_NAME") return pod.name;
    if (name == "NAMESPACE") return job.namespace_name;
    if (name == "JOB_NAME") return job.name;
    if (name == "ROLE") return std::string(PodRoleName(pod.role));
    if (name == "INDEX") return std::to_string(pod.index);
    if (name == "RANK") return std::to_string(AllreduceRank(pod));
    if (name == "WORLD_SIZE") return std::to_string(AllreduceWorldSize(job));
    if (name == "POD_IP") return pod.ip;
    if (name == "PORT") return std::to_string(job.port);
    if (name == "PS_HOSTS") return HostList(layout, job, PodRole::kPs);
    if (name == "WORKER_HOSTS") return HostList(layout, job, PodRole::kWorker);
    if (name == "CHIEF_HOSTS") return HostList(layout, job, job.ChiefRole());
    if (name == "STEPS_FILE") return StepsFilePath(layout.run_id, pod.name);
    if (name == "REPO") return repo;
    if (name == "PYTHON") return repo + "/.venv-workloads/bin/python";
    throw std::runtime_error("unknown placeholder ${" + name + "}");
  });
}

}  // namespace trainsim
