#include "flows/flow_map.h"

#include <cstring>

namespace trainscope {

peer_flow_key PackFlowKey(const FlowKey& key) {
  peer_flow_key raw;
  std::memset(&raw, 0, sizeof raw);  // padding takes part in hashing
  raw.pod_cgroup_id = key.pod.cgroup_id;
  std::memcpy(raw.peer_addr, key.peer.bytes.data(), 16);
  raw.local_port = key.local_port;
  raw.peer_port = key.peer_port;
  raw.direction = static_cast<uint8_t>(key.direction);
  raw.protocol = key.protocol;
  return raw;
}

FlowKey UnpackFlowKey(const peer_flow_key& raw) {
  FlowKey key;
  key.pod.cgroup_id = raw.pod_cgroup_id;
  key.peer = IpAddress::V6(raw.peer_addr);
  key.local_port = raw.local_port;
  key.peer_port = raw.peer_port;
  key.direction = raw.direction == PEER_FLOWS_TRANSMIT
                      ? FlowDirection::kTransmit
                      : FlowDirection::kReceive;
  key.protocol = raw.protocol;
  return key;
}

BurstEvent UnpackBurstEvent(const peer_burst_event& raw) {
  BurstEvent e;
  e.pod.cgroup_id = raw.pod_cgroup_id;
  e.peer = IpAddress::V6(raw.peer_addr);
  e.direction = raw.direction == PEER_FLOWS_TRANSMIT ? FlowDirection::kTransmit
                                                     : FlowDirection::kReceive;
  e.start_s = static_cast<double>(raw.start_ns) / 1e9;
  e.end_s = static_cast<double>(raw.end_ns) / 1e9;
  e.payload_bytes = raw.payload_bytes;
  e.packets = raw.packets;
  e.local_port = raw.local_port;
  e.peer_port = raw.peer_port;
  e.turn = raw.turn;
  return e;
}

FlowCounters SumPerCpu(const void* values, size_t cpus, size_t stride) {
  FlowCounters sum;
  const auto* base = static_cast<const unsigned char*>(values);
  for (size_t cpu = 0; cpu < cpus; ++cpu) {
    peer_flow_value v;
    std::memcpy(&v, base + cpu * stride, sizeof v);
    sum.bytes += v.bytes;
    sum.payload_bytes += v.payload_bytes;
    sum.packets += v.packets;
  }
  return sum;
}

std::vector<FlowDelta> CounterTracker::Update(
    const std::vector<std::pair<FlowKey, FlowCounters>>& current) {
  std::vector<FlowDelta> deltas;
  std::map<FlowKey, FlowCounters> next;
  for (const auto& [key, now] : current) {
    FlowCounters delta = now;
    if (auto it = last_.find(key); it != last_.end()) {
      const FlowCounters& before = it->second;
      if (now.bytes >= before.bytes && now.packets >= before.packets &&
          now.payload_bytes >= before.payload_bytes) {
        delta.bytes -= before.bytes;
        delta.payload_bytes -= before.payload_bytes;
        delta.packets -= before.packets;
      } else {
        ++resets_;
      }
    }
    next[key] = now;
    if (delta.packets || delta.bytes) deltas.push_back({key, delta});
  }
  last_ = std::move(next);
  return deltas;
}

}  // namespace trainscope
