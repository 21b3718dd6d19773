#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace trainscope::page::testing {

struct JobSpec {
  std::string namespace_name = "training";
  std::string name = "ctr";
  size_t ps = 4;
  size_t workers = 6;
  size_t nodes = 1;      // pods spread round-robin over node-0..node-(n-1)
  double hot_share = 0;  // > 0: ps-0 carries this share of the traffic
  double bytes_per_second = 40e6;  // the job's PS traffic
};

// A report JSON job entry as the agent writes it (with links).
nlohmann::json SyntheticJob(const JobSpec& spec);

// A whole report around the given jobs, with no diagnoses.
nlohmann::json SyntheticReport(const std::vector<nlohmann::json>& jobs,
                               const std::string& node = "node-0");

}  // namespace trainscope::page::testing
