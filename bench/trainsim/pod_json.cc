#include "pod_json.h"

#include <cmath>

#include "pod_env.h"

namespace trainsim {

using nlohmann::json;

std::string CpuQuantity(double cores) {
  long millis = std::max(1L, std::lround(cores * 1000));
  if (millis % 1000 == 0) return std::to_string(millis / 1000);
  return std::to_string(millis) + "m";
}

std::string MemoryQuantity(uint64_t bytes) {
  const std::pair<uint64_t, const char*> units[] = {
      {1ULL << 30, "Gi"}, {1ULL << 20, "Mi"}, {1ULL << 10, "Ki"}};
  for (const auto& [unit, suffix] : units)
    if (bytes >= unit && bytes % unit == 0)
      return std::to_string(bytes / unit) + suffix;
  return std::to_string(bytes);
}

namespace {

// Waiting in back-off between restarts, else running since the last start.
json ContainerState(const ContainerRestarts& r, const std::string& created_at) {
  if (r.backing_off) {
    return {{"waiting",
             {{"reason", "CrashLoopBackOff"},
              {"message", "back-off restarting failed container"}}}};
  }
  return {{"running",
           {{"startedAt",
             r.running_since.empty() ? created_at : r.running_since}}}};
}

}  // namespace

std::string NodeHostIp(int k) {
  return "192.0.2." + std::to_string(1 + k % 250);
}

std::string TfConfig(const Layout& layout, const SimPod& pod) {
  json cluster = json::object();
  for (const SimPod& p : layout.pods) {
    // The operator leaves evaluators out of the training cluster.
    if (p.job != pod.job || p.role == PodRole::kEvaluator) continue;
    // Headless service per replica, as the TFJob operator creates them; a
    // real program gets the pod IP instead, since trainsim has no DNS.
    const std::string host =
        p.job->program ? p.ip : p.name + "." + p.job->namespace_name + ".svc";
    cluster[std::string(PodRoleName(p.role))].push_back(
        host + ":" + std::to_string(p.job->port));
  }
  json tf = {{"cluster", cluster},
             {"task", {{"type", PodRoleName(pod.role)}, {"index", pod.index}}},
             {"environment", "cloud"}};
  return tf.dump();
}

json PodJson(const Layout& layout, const SimPod& pod,
             const PodOverrides& overrides, const std::string& resource_version,
             const std::string& created_at) {
  const Job& job = *pod.job;
  const std::string role(PodRoleName(pod.role));
  const std::string index = std::to_string(pod.index);

  const bool pytorch = job.kind == JobKind::kAllreduce;
  json labels = json::object();
  json owners = json::array();
  switch (job.labels) {
    case LabelStyle::kKubeflow:
      labels = {{"training.kubeflow.org/job-name", job.name},
                {"training.kubeflow.org/operator-name",
                 pytorch ? "pytorchjob-controller" : "tfjob-controller"},
                {"training.kubeflow.org/replica-type", role},
                {"training.kubeflow.org/replica-index", index}};
      if (pytorch ? AllreduceRank(pod) == 0
                  : pod.role == PodRole::kPs && pod.index == 0)
        labels["training.kubeflow.org/job-role"] = "master";
      owners.push_back(
          {{"apiVersion", "kubeflow.org/v1"},
           {"kind", pytorch ? "PyTorchJob" : "TFJob"},
           {"name", job.name},
           {"uid", layout.run_id + "-0000-4000-8000-00000000" + "0001"},
           {"controller", true},
           {"blockOwnerDeletion", true}});
      break;
    case LabelStyle::kSeed:
      labels = {{"name", job.name}, {"job", role}, {"task", index}};
      // The field story: PS as Deployments, workers as Jobs.
      owners.push_back(
          {{"apiVersion", pod.role == PodRole::kPs ? "apps/v1" : "batch/v1"},
           {"kind", pod.role == PodRole::kPs ? "ReplicaSet" : "Job"},
           {"name", pod.role == PodRole::kPs ? pod.name + "-5d9c7b" : pod.name},
           {"uid", layout.run_id + "-0000-4000-8000-00000000" + "0002"},
           {"controller", true},
           {"blockOwnerDeletion", true}});
      break;
    case LabelStyle::kJobSet: {
      // kubernetes-sigs/jobset: one Indexed Job per replicated job, its
      // pods' completion index the rank; the Kubeflow Trainer runs every
      // torchrun node in the replicated job `node`.
      const std::string rjob = pytorch ? "node" : role;
      const int rank = pytorch ? AllreduceRank(pod) : pod.index;
      labels = {
          {"jobset.sigs.k8s.io/jobset-name", job.name},
          {"jobset.sigs.k8s.io/replicatedjob-name", rjob},
          {"jobset.sigs.k8s.io/replicatedjob-replicas", "1"},
          {"jobset.sigs.k8s.io/job-index", "0"},
          {"batch.kubernetes.io/job-completion-index", std::to_string(rank)}};
      owners.push_back(
          {{"apiVersion", "batch/v1"},
           {"kind", "Job"},
           {"name", job.name + "-" + rjob + "-0"},
           {"uid", layout.run_id + "-0000-4000-8000-00000000" + "0003"},
           {"controller", true},
           {"blockOwnerDeletion", true}});
      break;
    }
    case LabelStyle::kVolcano:
      // volcano-sh/volcano: the job, its task (the replica type) and the
      // pod's index in it.
      labels = {{"volcano.sh/job-name", job.name},
                {"volcano.sh/task-spec", role},
                {"volcano.sh/task-index", index}};
      owners.push_back(
          {{"apiVersion", "batch.volcano.sh/v1alpha1"},
           {"kind", "Job"},
           {"name", job.name},
           {"uid", layout.run_id + "-0000-4000-8000-00000000" + "0004"},
           {"controller", true},
           {"blockOwnerDeletion", true}});
      break;
    case LabelStyle::kTfConfig:
    case LabelStyle::kNameOnly:
      break;
  }

  json env = json::array();
  for (const auto& [name, value] : OperatorEnv(layout, pod))
    env.push_back({{"name", name}, {"value", value}});

  // Requests below limits keep every pod Burstable, the QoS class whose
  // cgroup layout trainsim builds.
  json limits = json::object(), requests = json::object();
  std::optional<double> cpu = overrides.cpu_limit_cores
                                  ? overrides.cpu_limit_cores
                                  : pod.resources.cpu_limit_cores;
  if (cpu) {
    limits["cpu"] = CpuQuantity(*cpu);
    requests["cpu"] = CpuQuantity(*cpu / 2);
  } else {
    requests["cpu"] = "100m";
  }
  if (pod.resources.memory_limit_bytes) {
    limits["memory"] = MemoryQuantity(*pod.resources.memory_limit_bytes);
    requests["memory"] = MemoryQuantity(*pod.resources.memory_limit_bytes / 2);
  } else {
    requests["memory"] = "64Mi";
  }
  json resources = {{"requests", requests}};
  if (!limits.empty()) resources["limits"] = limits;

  json annotations = json::object();
  for (const auto& [k, v] : overrides.annotations) annotations[k] = v;

  const std::string image = pytorch ? "docker.io/trainsim/pytorch-sim:2.13"
                                    : "docker.io/trainsim/tensorflow-sim:1.15";
  // The container and port names each operator uses.
  const std::string container_name = pytorch ? "pytorch" : "tensorflow";
  json container = {{"name", container_name},
                    {"image", image},
                    {"ports",
                     {{{"name", pytorch ? "pytorchjob-port" : "tfjob-port"},
                       {"containerPort", job.port},
                       {"protocol", "TCP"}}}},
                    {"env", env},
                    {"resources", resources},
                    {"imagePullPolicy", "IfNotPresent"}};

  json metadata = {{"name", pod.name},
                   {"namespace", job.namespace_name},
                   {"uid", pod.uid},
                   {"resourceVersion", resource_version},
                   {"creationTimestamp", created_at},
                   {"labels", labels},
                   {"annotations", annotations}};
  if (!owners.empty()) metadata["ownerReferences"] = owners;

  json status = {
      {"phase", "Running"},
      {"conditions",
       {{{"type", "Ready"},
         {"status", "True"},
         {"lastTransitionTime", created_at}},
        {{"type", "ContainersReady"},
         {"status", "True"},
         {"lastTransitionTime", created_at}},
        {{"type", "PodScheduled"},
         {"status", "True"},
         {"lastTransitionTime", created_at}}}},
      {"hostIP", NodeHostIp(pod.node)},
      {"podIP", pod.ip},
      {"podIPs", {{{"ip", pod.ip}}}},
      {"startTime", created_at},
      {"qosClass", "Burstable"},
      {"containerStatuses",
       {{{"name", container_name},
         {"ready", !overrides.restarts.backing_off},
         {"started", !overrides.restarts.backing_off},
         {"restartCount", overrides.restarts.count},
         {"image", image},
         {"imageID",
          image.substr(0, image.find(':')) + "@sha256:" + pod.container_id},
         {"containerID", "containerd://" + pod.container_id},
         // What the kubelet applied (it reports them since in-place
         // resize; the API server allows a resize only once they show).
         {"allocatedResources", requests},
         {"resources", resources},
         {"state", ContainerState(overrides.restarts, created_at)}}}}};
  if (!overrides.restarts.last_reason.empty()) {
    const ContainerRestarts& r = overrides.restarts;
    status["containerStatuses"][0]["lastState"] = {
        {"terminated",
         {{"reason", r.last_reason},
          {"exitCode", r.last_exit_code},
          {"startedAt", r.last_started_at},
          {"finishedAt", r.last_finished_at},
          {"containerID", "containerd://" + pod.container_id}}}};
  }

  return {
      {"kind", "Pod"},
      {"apiVersion", "v1"},
      {"metadata", metadata},
      {"spec",
       {{"nodeName", layout.NodeOf(pod).name},
        {"hostname", pod.name},
        {"subdomain", job.name},
        {"restartPolicy", pod.role == PodRole::kPs ? "Always" : "OnFailure"},
        {"schedulerName", "default-scheduler"},
        {"containers", {container}}}},
      {"status", status}};
}

}  // namespace trainsim
