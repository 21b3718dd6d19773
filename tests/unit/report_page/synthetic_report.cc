#include "synthetic_report.h"

namespace trainscope::page::testing {

nlohmann::json SyntheticJob(const JobSpec& s) {
  nlohmann::json job = {
      {"namespace", s.namespace_name},
      {"training_job", s.name},
      {"ps", nlohmann::json::array()},
      {"workers", nlohmann::json::array()},
      {"ps_traffic_share", nlohmann::json::object()},
      {"ps_bytes_per_second", nlohmann::json::object()},
      {"worker_ps_bytes_per_second", nlohmann::json::object()},
      {"links", nlohmann::json::array()},
      {"pod_nodes", nlohmann::json::object()},
      {"measured_from", "workers"}};
  auto node = [&](size_t i) { return "node-" + std::to_string(i % s.nodes); };
  std::vector<double> share(s.ps, s.ps ? 1.0 / static_cast<double>(s.ps) : 0);
  if (s.hot_share > 0 && s.ps > 1) {
    share[0] = s.hot_share;
    for (size_t i = 1; i < s.ps; ++i) {
      share[i] = (1 - s.hot_share) / static_cast<double>(s.ps - 1);
    }
  }
  for (size_t i = 0; i < s.ps; ++i) {
    const std::string pod = s.name + "-ps-" + std::to_string(i);
    job["ps"].push_back(pod);
    job["ps_traffic_share"][pod] = share[i];
    job["ps_bytes_per_second"][pod] = share[i] * s.bytes_per_second;
    job["pod_nodes"][pod] = node(i);
  }
  for (size_t w = 0; w < s.workers; ++w) {
    const std::string pod = s.name + "-worker-" + std::to_string(w);
    job["workers"].push_back(pod);
    job["pod_nodes"][pod] = node(s.ps + w);
    const double per_worker =
        s.bytes_per_second / static_cast<double>(s.workers);
    job["worker_ps_bytes_per_second"][pod] = per_worker;
    for (size_t i = 0; i < s.ps; ++i) {
      job["links"].push_back({{"worker", pod},
                              {"ps", s.name + "-ps-" + std::to_string(i)},
                              {"bytes_per_second", per_worker * share[i]}});
    }
  }
  return job;
}

nlohmann::json SyntheticReport(const std::vector<nlohmann::json>& jobs,
                               const std::string& node) {
  return {{"generated_at", "2026-11-23T16:00:00Z"},
          {"node", node},
          {"diagnoses", nlohmann::json::array()},
          {"jobs", nlohmann::json(jobs)}};
}

}  // namespace trainscope::page::testing
