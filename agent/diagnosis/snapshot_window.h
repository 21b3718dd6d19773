#pragma once

#include <cstdint>
#include <map>
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

// The same window kept up to date as the history slides: each cycle only the
// snapshots newer than the last one seen are converted and the points older
// than the history's oldest snapshot are dropped, instead of converting the
// whole history again (most of the diagnosis' cost per cycle with a full
// history). Update(h) always equals WindowFromSnapshots(h, node) for
// histories that only gain newer snapshots at the end and lose old ones at
// the front; anything else (a history that went back) is rebuilt.
class SlidingSnapshotWindow {
 public:
  explicit SlidingSnapshotWindow(std::string node);
  const Window& Update(
      const std::vector<std::shared_ptr<const Snapshot>>& history);

 private:
  void DropBefore(double t);

  std::string node_;
  Window window_;
  uint64_t last_sequence_ = 0;
  // When each peer's role was last reported, to drop roles that only
  // snapshots which have left the history reported.
  std::map<std::string, double> peer_role_seen_;
};

}  // namespace trainscope::diagnosis
