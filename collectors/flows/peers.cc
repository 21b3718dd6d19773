#include "flows/peers.h"

#include <algorithm>

namespace trainscope {
namespace {

// A reused IP belongs to the pod that holds it now: running pods win over
// pending ones, and both over finished pods that still list the address.
int PhaseRank(const std::string& phase) {
  if (phase == "Running") return 3;
  if (phase == "Pending" || phase.empty()) return 2;
  if (phase == "Unknown") return 1;
  return 0;  // Succeeded, Failed
}

void Claim(std::map<IpAddress, const PodInfo*>& index, const IpAddress& addr,
           const PodInfo* pod) {
  auto [it, inserted] = index.emplace(addr, pod);
  if (!inserted && PhaseRank(pod->phase) > PhaseRank(it->second->phase)) {
    it->second = pod;
  }
}

}  // namespace

PeerResolver::PeerResolver(const PodList& pods,
                           const std::map<uint64_t, std::string>& cgroup_to_uid,
                           const std::set<std::string>& local_uids,
                           const PodList* peer_pods) {
  auto index = [&](const PodInfo& pod, bool may_be_local) {
    if (!by_uid_.emplace(pod.uid, &pod).second) return;  // pod table first
    if (pod.host_network) return;
    std::vector<std::string> ips = pod.pod_ips;
    if (!pod.pod_ip.empty()) ips.push_back(pod.pod_ip);
    for (const auto& text : ips) {
      auto addr = IpAddress::Parse(text);
      if (!addr || addr->is_unspecified()) continue;
      Claim(by_address_, *addr, &pod);
      if (may_be_local && local_uids.count(pod.uid)) {
        Claim(local_by_address_, *addr, &pod);
      }
    }
  };
  for (const auto& pod : pods) index(pod, true);
  // Cgroup ids are this node's: only the pod table's pods own them.
  for (const auto& [id, uid] : cgroup_to_uid) {
    if (auto it = by_uid_.find(uid); it != by_uid_.end()) {
      by_cgroup_[id] = it->second;
    }
  }
  if (peer_pods) {
    for (const auto& pod : *peer_pods) index(pod, false);
  }
}

const PodInfo* PeerResolver::Local(const LocalPodRef& ref) const {
  if (ref.cgroup_id != 0) {
    auto it = by_cgroup_.find(ref.cgroup_id);
    return it == by_cgroup_.end() ? nullptr : it->second;
  }
  auto it = local_by_address_.find(ref.address);
  return it == local_by_address_.end() ? nullptr : it->second;
}

const PodInfo* PeerResolver::Peer(const IpAddress& address) const {
  auto it = by_address_.find(address);
  return it == by_address_.end() ? nullptr : it->second;
}

void PeerLedger::Add(const std::vector<FlowDelta>& deltas,
                     const PeerResolver& resolver) {
  for (const auto& d : deltas) {
    const PodInfo* local = resolver.Local(d.key.pod);
    if (!local) {
      unattributed_bytes_ += d.counters.bytes;
      continue;
    }
    const PodInfo* peer = resolver.Peer(d.key.peer);
    Totals& t = totals_[{local->uid, peer ? peer->uid : std::string()}];
    (d.key.direction == FlowDirection::kReceive ? t.receive : t.transmit) +=
        d.counters;
  }
}

void PeerLedger::AddBursts(const std::vector<BurstEvent>& bursts,
                           const PeerResolver& resolver, double gap_s) {
  tracks_bursts_ = true;
  double newest = 0;
  for (const auto& b : bursts) {
    const PodInfo* local = resolver.Local(b.pod);
    if (!local) continue;
    const PodInfo* peer = resolver.Peer(b.peer);
    auto it = totals_.find({local->uid, peer ? peer->uid : std::string()});
    if (it == totals_.end()) continue;
    auto& train = trains_[{local->uid, b.peer, b.direction}];
    const double seconds =
        AddToTrain(&train, {b.start_s, b.payload_bytes, b.end_s}, gap_s);
    if (train.size() > kBurstsPerTrain) train.pop_front();
    newest = std::max(newest, b.end_s);
    (b.direction == FlowDirection::kReceive
         ? it->second.receive_exchange_seconds
         : it->second.transmit_exchange_seconds) += seconds;
  }
  std::erase_if(trains_, [&](const auto& entry) {
    return entry.second.back().end_s < newest - kTrainMemorySeconds;
  });
}

void PeerLedger::AddWaits(const std::vector<WaitSpan>& waits,
                          const PeerResolver& resolver) {
  double newest = 0;
  for (const auto& w : waits) {
    const PodInfo* local = resolver.Local(w.pod);
    if (!local) continue;
    const PodInfo* peer = resolver.Peer(w.peer);
    auto it = totals_.find({local->uid, peer ? peer->uid : std::string()});
    if (it == totals_.end()) continue;
    auto& train = waits_[{local->uid, w.peer}];
    it->second.wait_seconds += AddToTrain(&train, {w.start_s, 0, w.end_s}, 0);
    if (train.size() > kBurstsPerTrain) train.pop_front();
    newest = std::max(newest, w.end_s);
  }
  std::erase_if(waits_, [&](const auto& entry) {
    return entry.second.back().end_s < newest - kTrainMemorySeconds;
  });
}

void PeerLedger::Prune(const PodList& pods, const PodList* peer_pods) {
  std::set<std::string> local_uids, peer_uids;
  for (const auto& pod : pods) local_uids.insert(pod.uid);
  peer_uids = local_uids;
  if (peer_pods) {
    for (const auto& pod : *peer_pods) peer_uids.insert(pod.uid);
  }
  std::erase_if(trains_, [&](const auto& entry) {
    return !local_uids.count(std::get<0>(entry.first));
  });
  std::erase_if(waits_, [&](const auto& entry) {
    return !local_uids.count(entry.first.first);
  });
  std::erase_if(totals_, [&](const auto& entry) {
    const auto& [local, peer] = entry.first;
    return !local_uids.count(local) ||
           (!peer.empty() && !peer_uids.count(peer));
  });
}

std::vector<PeerTrafficSample> PeerLedger::Samples(
    const PodList& pods, const PodList* peer_pods) const {
  std::map<std::string, const PodInfo*> by_uid;
  for (const auto& pod : pods) by_uid[pod.uid] = &pod;
  if (peer_pods) {
    for (const auto& pod : *peer_pods) by_uid.emplace(pod.uid, &pod);
  }
  std::vector<PeerTrafficSample> out;
  out.reserve(totals_.size());
  for (const auto& [key, t] : totals_) {
    PeerTrafficSample s;
    s.pod_uid = key.first;
    if (auto it = by_uid.find(key.second); it != by_uid.end()) {
      s.peer_uid = it->second->uid;
      s.peer_namespace = it->second->namespace_name;
      s.peer_pod = it->second->name;
      s.peer_role = it->second->role;
    }
    s.receive_bytes = t.receive.bytes;
    s.transmit_bytes = t.transmit.bytes;
    s.receive_packets = t.receive.packets;
    s.transmit_packets = t.transmit.packets;
    s.receive_payload_bytes = t.receive.payload_bytes;
    s.transmit_payload_bytes = t.transmit.payload_bytes;
    if (tracks_bursts_) {
      s.receive_exchange_seconds = t.receive_exchange_seconds;
      s.transmit_exchange_seconds = t.transmit_exchange_seconds;
      s.wait_seconds = t.wait_seconds;
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace trainscope
