#include "diagnosis/training_speed.h"

#include <tuple>

#include "diagnosis/detectors.h"

namespace trainscope::diagnosis {

std::vector<JobSpeed> ComputeJobSpeeds(const WindowStats& stats) {
  std::map<std::pair<std::string, std::string>, JobSpeed> jobs;
  for (const auto& [key, pod] : stats.pods) {
    const PodMeta& m = pod.meta;
    if (m.training_job.empty() || !RunsTrainingSteps(m.role)) continue;
    JobSpeed& job = jobs[{m.namespace_name, m.training_job}];
    job.namespace_name = m.namespace_name;
    job.training_job = m.training_job;
    if (pod.steps_per_second) {
      job.worker_steps_per_second[m.pod] = *pod.steps_per_second;
      job.steps_per_second += *pod.steps_per_second;
    } else {
      job.workers_without_rate.push_back(m.pod);
    }
  }
  std::vector<JobSpeed> out;
  for (auto& [_, job] : jobs) out.push_back(std::move(job));
  return out;
}

namespace {

void Withdraw(JobSpeed& job, const std::string& pod) {
  const auto it = job.worker_steps_per_second.find(pod);
  if (it == job.worker_steps_per_second.end()) return;
  job.steps_per_second -= it->second;
  job.workers_without_rate.push_back(pod);
  job.worker_steps_per_second.erase(it);
}

}  // namespace

void WithdrawStalledRates(const std::vector<Diagnosis>& active,
                          std::vector<JobSpeed>& speeds) {
  for (const Diagnosis& d : active) {
    if (d.kind != kTrainingStalled) continue;
    for (JobSpeed& job : speeds) {
      if (job.namespace_name != d.namespace_name ||
          job.training_job != d.training_job)
        continue;
      if (d.severity == Severity::kCritical) {
        std::vector<std::string> pods;
        for (const auto& [pod, rate] : job.worker_steps_per_second)
          pods.push_back(pod);
        for (const std::string& pod : pods) Withdraw(job, pod);
        job.steps_per_second = 0;
      } else {
        Withdraw(job, d.pod);
      }
    }
  }
}

std::optional<double> PeerMedianSteps(const WindowStats& stats,
                                      const PodMeta& of,
                                      const std::string& except_key) {
  std::vector<double> rates;
  for (const auto& [key, pod] : stats.pods) {
    const PodMeta& m = pod.meta;
    if (key == except_key || !pod.steps_per_second ||
        !RunsTrainingSteps(m.role) || m.namespace_name != of.namespace_name ||
        m.training_job != of.training_job)
      continue;
    rates.push_back(*pod.steps_per_second);
  }
  if (rates.empty()) return std::nullopt;
  return Median(rates);
}

}  // namespace trainscope::diagnosis
