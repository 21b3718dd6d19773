#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "diagnosis/settings.h"
#include "diagnosis/window.h"

namespace trainscope::diagnosis {

// What a rank of a stopped job does while the job makes no step, from its
// quiet tail (exchange_quiet.h). Most to least telling: a rank that differs
// from the others is the suspect, and the first kind it shows names why.
enum class RankActivity {
  kExited,     // no process left in the pod
  kStopped,    // its processes stopped by a signal or a tracer (T)
  kBlockedIo,  // blocked in uninterruptible sleep, mostly IO (D)
  kLinkDead,   // it sends a peer that answers nothing (retransmissions)
  kComputing,  // busy on CPU while it exchanges nothing
  kWaiting,    // asleep: it waits on the others
};

// The evidence word (DESIGN.md: suspect_reason). kWaiting is "all_waiting":
// nothing on the rank differs from a rank that waits.
std::string_view SuspectReason(RankActivity activity);

struct RankView {
  const PodStats* pod = nullptr;
  RankActivity activity = RankActivity::kWaiting;
  // kLinkDead: the peer ("namespace/pod") it sends without an answer.
  std::string unanswered_peer;
};

// The rank's activity over its quiet tail; `pod.quiet` must be set.
RankView ClassifyRank(const PodStats& pod, const StallSettings& s);

// One row of the evidence's per-rank table.
nlohmann::json RankRow(const RankView& rank, bool suspect);

}  // namespace trainscope::diagnosis
