#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>

#include "diagnosis/settings.h"
#include "diagnosis/window.h"

namespace trainscope::diagnosis {

// An interval in which a pod exchanged less than this fraction of its
// fullest interval's rate with its peers moved no step: what is left is
// TCP's retransmissions to a dead peer, keep-alives and a coordinator's
// heartbeats, kilobytes against a step's megabytes. Measured: healthy
// built-in and real ranks move 0.2-40 MB/s in every interval holding a step
// boundary; a hung rank's retransmissions stay under 2 kB/s.
inline constexpr double kQuietFraction = 0.05;
// Below this (bytes/s), an interval is quiet whatever the pod's fullest
// rate: a pod that only ever exchanged this little never showed a step.
inline constexpr double kQuietFloorBytesPerSecond = 512;

// Exchange rate between two consecutive points of a pod (bytes/s, both
// ways, with the peers it had at both); 0 across a restart.
double ExchangeRate(const PodPoint& a, const PodPoint& b);

// The quiet tail of a pod's points (oldest first). Empty with fewer than
// two points; not `anchored` when no interval of the points exchanged above
// the quiet line (a pod that never showed a step here, or one quiet since
// before the points).
std::optional<QuietTail> QuietTailOf(std::span<const PodPoint> points);

// A pod that exchanged nothing for at least `min_quiet_s`, now or in a run
// that ended within the last `within_s`: it stopped (training_stalled
// judges it), so a comparison of rates over a window holding the stop would
// call it slow. `pod` from the longer history.
bool StoppedRecently(const PodStats& pod, double min_quiet_s, double within_s);

// How long a pod must exchange nothing to have stopped rather than be slow:
// a whole sampling interval, or three of its steps when they are longer
// (half of min_stall_s when its step time is not known).
double StopLine(const PodStats& pod, double interval_s, const StallSettings& s);

// The node view's memory of each pod's last exchange above the quiet line,
// beyond its history (60 samples: 2 to 5 minutes): a job hung for an hour
// is quiet since its last step, not since the history's start.
class ExchangeMemory {
 public:
  // Follows the intervals newer than those seen; forgets pods that left.
  void Observe(const Window& window);
  std::optional<double> LastExchange(const std::string& pod_key) const;
  // Anchors each not anchored quiet tail the memory knows.
  void Anchor(WindowStats& stats) const;

 private:
  struct Entry {
    // Its fullest exchange rate, halving every kReferenceHalfLifeS: a job
    // that changed pace is judged against its new pace within the hour.
    double reference = 0;
    std::optional<double> last_exchange_t;
    double seen_t = 0;  // the newest point followed
  };
  static constexpr double kReferenceHalfLifeS = 600;
  std::map<std::string, Entry> pods_;
};

}  // namespace trainscope::diagnosis
