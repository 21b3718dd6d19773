#pragma once

#include <string>
#include <vector>

#include "trainscope/pod.h"

namespace trainscope {

// Which pods get pod- and container-level series (--pod-filter,
// --pod-namespaces). Only the exposition is filtered: the detectors and the
// agent's own report see every pod (docs/metrics.md, "Pod filter").
struct PodFilter {
  bool training_only = false;           // pods with a known training role
  std::vector<std::string> namespaces;  // empty = every namespace

  bool Exports(const PodInfo& pod) const;
};

}  // namespace trainscope
