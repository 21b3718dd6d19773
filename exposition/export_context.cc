#include "exposition/export_context.h"

#include <algorithm>

namespace trainscope {

bool PodFilter::Exports(const PodInfo& pod) const {
  if (training_only && pod.role == Role::kUnknown) return false;
  return namespaces.empty() ||
         std::find(namespaces.begin(), namespaces.end(), pod.namespace_name) !=
             namespaces.end();
}

ExportContext::ExportContext(const Snapshot& snapshot, std::string node,
                             PodFilter filter)
    : snapshot_(snapshot), node_(std::move(node)), filter_(std::move(filter)) {
  if (snapshot_.pods) {
    by_uid_.reserve(snapshot_.pods->size());
    for (const auto& pod : *snapshot_.pods) {
      if (filter_.Exports(pod)) by_uid_[pod.uid] = &pod;
    }
  }
}

const PodInfo* ExportContext::FindPod(const std::string& uid) const {
  auto it = by_uid_.find(uid);
  return it == by_uid_.end() ? nullptr : it->second;
}

LabelMap ExportContext::PodLabels(const PodInfo& pod) const {
  return {
      {"namespace", pod.namespace_name},
      {"pod", pod.name},
      {"training_job", pod.training_job},
      {"role", std::string(RoleName(pod.role))},
      {"replica_index",
       pod.replica_index >= 0 ? std::to_string(pod.replica_index) : ""},
  };
}

}  // namespace trainscope
