#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trainscope/snapshot.h"

namespace trainscope {

// How a job's parameter-server traffic splits over its PS, as seen on one
// node: the bytes (both directions) that the job's workers (worker, chief,
// master) exchanged with each PS over a window.
struct PsTrafficShare {
  std::string namespace_name;
  std::string training_job;
  double total_bytes = 0;
  // Every PS of the job in the pod table, by pod name, including PS that
  // carried nothing (the signal of a hot PS is the others' zeros).
  std::map<std::string, double> bytes;
  // bytes / total; empty when total is 0 (a share of nothing is undefined).
  std::map<std::string, double> share;
  // max / mean over the PS; empty when total is 0.
  std::optional<double> skew;
};

// The window is oldest first (History::Window); the pods of the newest
// snapshot define the jobs. A pair's bytes are the increase of its counters
// between the first and the last snapshot (a pair that appears within the
// window counts from 0, a counter that went down counts from its reset).
// When the worker and the PS both run on this node the pair is seen twice,
// once from each side; it is counted once.
std::vector<PsTrafficShare> ComputePsTrafficShares(
    const std::vector<std::shared_ptr<const Snapshot>>& window);

// Share of each PS given its bytes; exposed for tests and the diagnosis.
void FillShares(PsTrafficShare& job);

}  // namespace trainscope
