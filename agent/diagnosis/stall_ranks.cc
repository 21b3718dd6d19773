#include "diagnosis/stall_ranks.h"

#include <algorithm>

#include "diagnosis/detectors.h"

namespace trainscope::diagnosis {
namespace {

bool Computing(const PodStats& pod, const StallSettings& s) {
  const double cores = pod.quiet->cpu_cores.value_or(0);
  double busy = s.computing_cores;
  // A rank limited to less than a core spins at its limit.
  if (pod.cpu_limit_cores && *pod.cpu_limit_cores > 0)
    busy = std::min(busy, 0.8 * *pod.cpu_limit_cores);
  return cores >= busy;
}

// The peer it still sends to (retransmissions, zero-window probes) while
// nothing comes back: on a live link the peer's TCP acknowledges even when
// its program reads nothing. The peer it sends most to.
std::string UnansweredPeer(const PodStats& pod, const StallSettings& s) {
  std::string peer;
  double most = 0;
  for (const auto& [key, rates] : pod.quiet->peer_rates) {
    if (rates.receive_bytes > 0 ||
        rates.transmit_bytes < s.unanswered_min_bytes_per_second)
      continue;
    if (rates.transmit_bytes > most) {
      most = rates.transmit_bytes;
      peer = key;
    }
  }
  return peer;
}

// The state letter a person reads in `ps`: the one the rank held most.
std::string_view StateLetter(const StateShares& s) {
  if (s.points == 0) return "-";
  if (s.none >= 0.5) return "-";
  const std::pair<double, std::string_view> states[] = {
      {s.stopped, "T"}, {s.disk_sleep, "D"}, {s.running, "R"},
      {s.zombie, "Z"},  {s.sleeping, "S"},
  };
  for (const auto& [share, letter] : states)
    if (share >= 0.5) return letter;
  return "S";
}

double TailSum(const PodStats& pod, double PeerCounters::*field) {
  double sum = 0;
  for (const auto& [_, rates] : pod.quiet->peer_rates) sum += rates.*field;
  return sum;
}

}  // namespace

std::string_view SuspectReason(RankActivity activity) {
  switch (activity) {
    case RankActivity::kExited:
      return "exited";
    case RankActivity::kStopped:
      return "stopped";
    case RankActivity::kBlockedIo:
      return "blocked_io";
    case RankActivity::kLinkDead:
      return "link_dead";
    case RankActivity::kComputing:
      return "computing";
    case RankActivity::kWaiting:
      return "all_waiting";
  }
  return "all_waiting";
}

RankView ClassifyRank(const PodStats& pod, const StallSettings& s) {
  RankView r;
  r.pod = &pod;
  const StateShares& st = pod.quiet->states;
  const bool states_read = st.points > 0;
  if (states_read && st.none >= s.state_share) {
    r.activity = RankActivity::kExited;
  } else if (pod.restarts_increase && *pod.restarts_increase > 0) {
    r.activity = RankActivity::kExited;
  } else if (states_read && st.stopped >= s.state_share) {
    r.activity = RankActivity::kStopped;
  } else if (states_read && st.disk_sleep >= s.state_share &&
             !Computing(pod, s)) {
    r.activity = RankActivity::kBlockedIo;
  } else if (r.unanswered_peer = UnansweredPeer(pod, s);
             !r.unanswered_peer.empty()) {
    r.activity = RankActivity::kLinkDead;
  } else if (Computing(pod, s)) {
    r.activity = RankActivity::kComputing;
  }
  return r;
}

nlohmann::json RankRow(const RankView& rank, bool suspect) {
  const PodStats& pod = *rank.pod;
  const QuietTail& q = *pod.quiet;
  nlohmann::json row = {
      {"pod", pod.meta.pod},
      {"node", pod.meta.node},
      {"role", std::string(RoleName(pod.meta.role))},
      {"state", std::string(StateLetter(q.states))},
      {"activity", std::string(SuspectReason(rank.activity))},
      {"cpu_cores", Round4(q.cpu_cores.value_or(0))},
      {"quiet_seconds", Round4(q.seconds)},
      {"transmit_bytes_per_second",
       Round4(TailSum(pod, &PeerCounters::transmit_bytes))},
      {"receive_bytes_per_second",
       Round4(TailSum(pod, &PeerCounters::receive_bytes))},
      {"suspect", suspect},
  };
  if (const auto& n = q.newest_processes) {
    row["processes"] = {{"running", n->running},
                        {"sleeping", n->sleeping},
                        {"disk_sleep", n->disk_sleep},
                        {"stopped", n->stopped},
                        {"zombie", n->zombie}};
  }
  if (q.io_write_bytes_per_second)
    row["io_write_bytes_per_second"] = Round4(*q.io_write_bytes_per_second);
  if (!rank.unanswered_peer.empty())
    row["unanswered_peer"] = rank.unanswered_peer;
  return row;
}

}  // namespace trainscope::diagnosis
