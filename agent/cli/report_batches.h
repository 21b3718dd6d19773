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
  std::string role;          // the `role` label ("" = none)
  std::string node;          // the `node` label of its pod_info
};

// What a batch's answers weigh, in series: every pod has about this many
// (its pod series, pod_info, the unknown-peer pair), and each PS-worker pair
// of a job four more (both directions, seen from both ends). A 200 x 20 PS
// job is 3,520 pod series but 16,000 peer series: pods alone do not bound
// a batch (docs/performance.md).
inline constexpr size_t kSeriesPerPod = 16;
inline constexpr size_t kSeriesPerPeerPair = 4;

// The series a job of these pods is expected to have: pod series, plus the
// worker-PS pairs of a PS job or each worker's two ring neighbours of an
// allreduce job.
size_t EstimatedJobSeries(size_t pods, size_t workers, size_t ps);

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
  size_t estimated_series = 0;
  // Pods without the rest of their jobs (the pods of a node the triage
  // flags): only pod and node findings of this batch count.
  bool pods_without_jobs = false;
};

// Cuts the pods into batches of at most `max_pods` pods, never splitting a
// training job (a job larger than `max_pods` is a batch of its own). Pods of
// no job fill batches by namespace. One batch with no matchers when
// everything fits in one. `base` (matchers every series must also match,
// e.g. `namespace="a"`) is prefixed to every matcher list. `subset`: the
// pods are a chosen part of the roster (the triage's, report_triage.h), so
// every batch names its jobs and pods (no "every pod" or "whole namespace"
// matcher).
std::vector<Batch> PlanBatches(const std::vector<PodRef>& pods, size_t max_pods,
                               const std::string& base, bool subset = false);

// Batches of these pods by name, without their jobs (pods_without_jobs):
// one `namespace="x",pod=~"a|b"` list per namespace, each pod weighed as
// twice kSeriesPerPod (its peer series unknown).
std::vector<Batch> PlanPodBatches(const std::vector<PodRef>& pods,
                                  size_t max_series, const std::string& base);

// A PromQL regex matching exactly these names (anchored by PromQL).
std::string ExactAlternatives(const std::vector<std::string>& names);

}  // namespace trainscope::cli
