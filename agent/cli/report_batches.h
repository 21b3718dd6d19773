#pragma once

// The cluster view of a large cluster in batches. One window of every pod
// grows with the cluster (55,000 pods at 500 nodes do not fit in 512 MiB),
// so the report reads the pods a batch at a time, runs the detectors over
// each batch and merges the diagnoses. A batch holds whole training jobs
// (the job detectors compare a job's workers and PS with each other) and
// pods of no job; docs/performance.md, "Cluster view at 500 nodes".

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "trainscope/status.h"

namespace trainscope::cli {

// A pod seen in the range: what batches are cut along.
struct PodRef {
  std::string namespace_name;
  std::string pod;
  std::string training_job;  // "" = no job
};

// One instant query listing the pods with agent series in the last
// `range_seconds` before its evaluation time; `matchers` are added to the
// selector ("" = every pod).
std::string PodRosterQuery(const std::string& matchers, double range_seconds);

// The pods of a PodRosterQuery answer (`data.result` of a vector).
Status PodRefsFromVector(const nlohmann::json& result,
                         std::vector<PodRef>* pods);

struct Batch {
  // Label matcher lists (`a="x",b=~"y|z"`); a series belongs to the batch
  // when it matches any of them. {""} = every series.
  std::vector<std::string> matcher_sets;
  size_t pods = 0;
};

// Cuts the pods into batches of at most `max_pods` pods, never splitting a
// training job (a job larger than `max_pods` is a batch of its own). Pods of
// no job fill batches by namespace. One batch with no matchers when
// everything fits in one. `base` (matchers every series must also match,
// e.g. `namespace="a"`) is prefixed to every matcher list.
std::vector<Batch> PlanBatches(const std::vector<PodRef>& pods, size_t max_pods,
                               const std::string& base);

// A PromQL regex matching exactly these names (anchored by PromQL).
std::string ExactAlternatives(const std::vector<std::string>& names);

}  // namespace trainscope::cli
