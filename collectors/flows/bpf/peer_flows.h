// Structs shared by peer_flows.bpf.c and user space. Fixed-width fields and
// explicit padding only: both sides must agree on every byte of the key, or
// lookups silently miss.
#pragma once

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

#define PEER_FLOWS_MAX_POD_LEVELS 4

enum peer_flows_direction {
  PEER_FLOWS_RECEIVE = 0,
  PEER_FLOWS_TRANSMIT = 1,
};

struct peer_flow_key {
  __u64 pod_cgroup_id;  // inode number of the pod's cgroup v2 directory
  __u8 peer_addr[16];   // IPv6, or IPv4 mapped as ::ffff:a.b.c.d
  __u16 local_port;     // host byte order; 0 when not TCP/UDP
  __u16 peer_port;
  __u8 direction;  // enum peer_flows_direction
  __u8 protocol;   // IPPROTO_TCP, IPPROTO_UDP, or the raw L4 number
  __u8 pad[2];
};

struct peer_flow_value {
  __u64 bytes;          // skb->len: IP header and everything after it
  __u64 payload_bytes;  // bytes minus IP and TCP/UDP headers
  __u64 packets;        // skbs (a GSO skb counts once)
};

// One finished exchange burst: the payload-carrying packets of one socket in
// one direction with no gap longer than the burst gap between them (the
// state is kept on the socket, peer_flows.bpf.c). Sent to user space through
// the ring buffer when the socket's first packet after the gap arrives, or
// its connection closes (one event per burst, never per packet). A training
// step exchanges with each peer once, so the bursts' start times repeat once
// per step; user space joins a peer's connections and estimates that period
// (step_period.h).
struct peer_burst_event {
  __u64 pod_cgroup_id;
  __u8 peer_addr[16];
  __u64 start_ns;
  __u64 end_ns;  // last packet of the burst
  __u64 payload_bytes;
  __u32 packets;
  // The socket's payload changed direction this many times before the
  // burst began: bursts of one socket and direction with the same turn are
  // pieces of one exchange (a response a contended link cut), with no
  // request or reply between them.
  __u32 turn;
  __u16 local_port;  // host byte order, of the burst's socket
  __u16 peer_port;
  __u8 direction;
  __u8 pad[3];
};
