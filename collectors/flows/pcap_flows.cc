#include "flows/pcap_flows.h"

namespace trainscope {

void ConversationTable::Add(const ParsedPacket& p) {
  Endpoints fwd{p.src, p.dst, p.src_port, p.dst_port, p.protocol};
  Endpoints rev{p.dst, p.src, p.dst_port, p.src_port, p.protocol};
  auto it = index_.find(fwd);
  if (it == index_.end()) {
    rows_.push_back(Conversation{.a_to_b = fwd});
    index_[fwd] = rows_.size() - 1;
    index_[rev] = rows_.size() - 1;
    it = index_.find(fwd);
  }
  Conversation& c = rows_[it->second];
  if (c.a_to_b == fwd) {
    c.frames_a_to_b += 1;
    c.frame_bytes_a_to_b += p.frame_bytes;
    c.ip_bytes_a_to_b += p.ip_bytes;
  } else {
    c.frames_b_to_a += 1;
    c.frame_bytes_b_to_a += p.frame_bytes;
    c.ip_bytes_b_to_a += p.ip_bytes;
  }
}

void PacketAccounting::SetLocalPods(std::map<IpAddress, std::string> local) {
  local_ = std::move(local);
}

void PacketAccounting::Add(const ParsedPacket& p, int ifindex) {
  Endpoints flow{p.src, p.dst, p.src_port, p.dst_port, p.protocol};
  auto [it, inserted] = first_ifindex_.emplace(flow, ifindex);
  if (!inserted && it->second != ifindex) {
    ++duplicates_;
    return;
  }
  // Bounded memory: forgetting the pinning only risks double counting a
  // flow that crosses several captured interfaces, never losing bytes.
  if (first_ifindex_.size() > max_flows_) first_ifindex_.clear();
  const bool src_local = local_.count(p.src) > 0;
  const bool dst_local = local_.count(p.dst) > 0;
  if (!src_local && !dst_local) {
    ++not_local_;
    return;
  }
  if (src_local) {
    Count(p.src, p.dst, p.src_port, p.dst_port, p.protocol,
          FlowDirection::kTransmit, p);
  }
  if (dst_local) {
    Count(p.dst, p.src, p.dst_port, p.src_port, p.protocol,
          FlowDirection::kReceive, p);
  }
}

void PacketAccounting::Count(const IpAddress& local, const IpAddress& peer,
                             uint16_t lport, uint16_t pport, uint8_t proto,
                             FlowDirection dir, const ParsedPacket& p) {
  FlowKey key;
  key.pod.address = local;
  key.peer = peer;
  key.local_port = lport;
  key.peer_port = pport;
  key.direction = dir;
  key.protocol = proto;
  FlowCounters& c = pending_[key];
  // IP-level bytes, the same unit the eBPF collector counts.
  c.bytes += p.ip_bytes;
  c.payload_bytes += p.payload_bytes;
  c.packets += 1;
  bursts_.Add(key.pod, peer, dir, p.timestamp_s, p.payload_bytes, lport, pport);
}

std::vector<FlowDelta> PacketAccounting::TakeDeltas() {
  std::vector<FlowDelta> out;
  out.reserve(pending_.size());
  for (auto& [key, counters] : pending_) out.push_back({key, counters});
  pending_.clear();
  return out;
}

}  // namespace trainscope
