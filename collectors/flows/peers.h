#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "flows/burst.h"
#include "flows/exchange_wait.h"
#include "flows/flow_record.h"
#include "flows/step_period.h"
#include "trainscope/pod.h"
#include "trainscope/snapshot.h"

namespace trainscope {

// Maps flow endpoints to pods. Built once per cycle from the pod table, the
// pod cgroup ids found on this node (eBPF) and the set of local pods (pcap).
// `peer_pods` (may be null) are pods of other nodes from the peer-pod
// watch: they can be a flow's peer, never its local pod, and the pod table's
// entry wins for a pod both know.
class PeerResolver {
 public:
  PeerResolver(const PodList& pods,
               const std::map<uint64_t, std::string>& cgroup_to_uid,
               const std::set<std::string>& local_uids,
               const PodList* peer_pods = nullptr);

  // The local pod a flow belongs to, or nullptr.
  const PodInfo* Local(const LocalPodRef& ref) const;
  // The pod that owns `address`, or nullptr. hostNetwork pods never match:
  // their address is the node's and says nothing about the peer.
  const PodInfo* Peer(const IpAddress& address) const;
  // Local pods by address, for sources that only see addresses (pcap).
  const std::map<IpAddress, const PodInfo*>& local_by_address() const {
    return local_by_address_;
  }

 private:
  std::map<std::string, const PodInfo*> by_uid_;
  std::map<IpAddress, const PodInfo*> by_address_;
  std::map<IpAddress, const PodInfo*> local_by_address_;
  std::map<uint64_t, const PodInfo*> by_cgroup_;
};

// Cumulative bytes per (local pod, peer pod), the shape the metrics have.
// Ports are dropped here: ephemeral ports never become labels. Counters only
// ever grow; a pair disappears when either pod leaves the pod table.
class PeerLedger {
 public:
  struct Totals {
    FlowCounters receive;
    FlowCounters transmit;
    double receive_exchange_seconds = 0;
    double transmit_exchange_seconds = 0;
    // Time the pod waited on the peer's answers (AddWaits).
    double wait_seconds = 0;
  };
  // (local pod uid, peer pod uid or "" for every unknown peer)
  using PairKey = std::pair<std::string, std::string>;

  // Adds the deltas. Flows whose local pod is unknown are counted in
  // unattributed() and otherwise dropped.
  void Add(const std::vector<FlowDelta>& deltas, const PeerResolver& resolver);
  // Adds the time the bursts span to the exchange time of their pairs (only
  // pairs whose bytes are counted; other bursts are dropped), once however
  // many of a peer's connections carried it: bursts within `gap_s` of each
  // other are one exchange. After the first call, samples carry exchange
  // seconds.
  void AddBursts(const std::vector<BurstEvent>& bursts,
                 const PeerResolver& resolver, double gap_s);
  // Adds the time the spans cover to the wait time of their pairs (only
  // pairs whose bytes are counted), once however many of the pair's
  // connections waited at the same time: a worker's reads of several
  // variables from one PS at once are one wait.
  void AddWaits(const std::vector<WaitSpan>& waits,
                const PeerResolver& resolver);
  // Forgets pairs whose local pod (in `pods`) or known peer pod (in `pods`
  // or `peer_pods`) is gone.
  void Prune(const PodList& pods, const PodList* peer_pods = nullptr);
  // Peer identity from `pods`, else `peer_pods`.
  std::vector<PeerTrafficSample> Samples(
      const PodList& pods, const PodList* peer_pods = nullptr) const;
  const std::map<PairKey, Totals>& totals() const { return totals_; }
  uint64_t unattributed_bytes() const { return unattributed_bytes_; }

 private:
  // The newest bursts per (local pod uid, peer address, direction), for
  // joining the pieces of one exchange that arrive apart.
  using TrainKey = std::tuple<std::string, IpAddress, FlowDirection>;
  // A late piece comes when its connection next sends, within a step or
  // two; trains quiet for a minute are dropped.
  static constexpr size_t kBurstsPerTrain = 16;
  static constexpr double kTrainMemorySeconds = 60;
  std::map<TrainKey, std::deque<BurstPoint>> trains_;
  // The newest waits per (local pod uid, peer address), joined where they
  // overlap.
  using WaitKey = std::pair<std::string, IpAddress>;
  std::map<WaitKey, std::deque<BurstPoint>> waits_;
  std::map<PairKey, Totals> totals_;
  uint64_t unattributed_bytes_ = 0;
  bool tracks_bursts_ = false;
};

}  // namespace trainscope
