#pragma once

#include <memory>
#include <string>
#include <vector>

#include "diagnosis/window.h"
#include "trainscope/snapshot.h"

namespace trainscope::diagnosis {

// The agent's samples as a detector window: one point per pod per snapshot
// (oldest first), identity and limits from the pod list of the newest
// snapshot that knows the pod. Pods without a training identity are kept
// (throttling and memory concern every pod). `node` names this agent's node
// for pods whose spec does not say.
Window WindowFromSnapshots(
    const std::vector<std::shared_ptr<const Snapshot>>& snapshots,
    const std::string& node);

}  // namespace trainscope::diagnosis
