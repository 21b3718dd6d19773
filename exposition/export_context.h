#pragma once

#include <prometheus/metric_family.h>

#include <functional>
#include <string>
#include <unordered_map>
#include <vector>

#include "exposition/family_builder.h"
#include "exposition/pod_filter.h"
#include "trainscope/pod.h"
#include "trainscope/snapshot.h"

namespace trainscope {

// What every section of the exposition needs besides the snapshot.
class ExportContext {
 public:
  ExportContext(const Snapshot& snapshot, std::string node,
                PodFilter filter = {});

  const Snapshot& snapshot() const { return snapshot_; }
  const std::string& node() const { return node_; }
  // The pod with this UID, or nullptr when discovery no longer knows it or
  // the pod filter leaves it out.
  const PodInfo* FindPod(const std::string& uid) const;
  // Whether the pod filter exports this pod.
  bool Exports(const PodInfo& pod) const { return filter_.Exports(pod); }
  // namespace, pod, training_job, role, replica_index (empty values for
  // unknown identity, so every pod series has the same label names).
  LabelMap PodLabels(const PodInfo& pod) const;

 private:
  const Snapshot& snapshot_;
  std::string node_;
  PodFilter filter_;
  std::unordered_map<std::string, const PodInfo*> by_uid_;
};

// One section of the exposition: appends its families for the snapshot.
// A std::function so a section can read state besides the snapshot (the
// diagnosis engine's active diagnoses).
using FamilySection = std::function<void(
    const ExportContext&, std::vector<prometheus::MetricFamily>&)>;

}  // namespace trainscope
