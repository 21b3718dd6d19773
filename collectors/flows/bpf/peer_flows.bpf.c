// Per-pod, per-peer byte counters aggregated in the kernel. Attached as
// cgroup_skb ingress/egress to the kubepods cgroup (or any ancestor); user
// space drains the LRU map once per sampling interval, never per packet.
// vmlinux.h must come first: it defines the kernel types that the libbpf
// headers and the shared header use.
// clang-format off
#include "vmlinux.h"
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>
#include "peer_flows.h"
// clang-format on

#define ETH_P_IP 0x0800
#define ETH_P_IPV6 0x86DD
#define IPPROTO_TCP_ 6
#define IPPROTO_UDP_ 17

char LICENSE[] SEC("license") = "GPL";

// Map size is set by user space before load (--flow-map-entries).
struct {
  __uint(type, BPF_MAP_TYPE_LRU_PERCPU_HASH);
  __uint(max_entries, 65536);
  __type(key, struct peer_flow_key);
  __type(value, struct peer_flow_value);
} peer_flows SEC(".maps");

// Pod cgroup ids the agent knows; traffic of any other cgroup is skipped in
// the kernel so host traffic never competes for map slots.
struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 4096);
  __type(key, __u64);
  __type(value, __u8);
} pod_cgroups SEC(".maps");

// Bumped by user space after every change of pod_cgroups.
__u64 pods_generation = 0;

// The exchange burst in progress on one socket in one direction: the
// payload-carrying packets with no silence longer than the burst gap between
// them. Kept on the socket, not per (pod, peer): that cost a second hash
// lookup for every payload packet (the programs' own work went from 135.5 to
// 128 ns a run without it); user space joins the bursts of a peer's
// connections (NCCL and Gloo open several) into one.
struct socket_burst {
  __u8 peer_addr[16];  // an unconnected UDP socket may change peers
  __u64 start_ns;      // bpf_ktime_get_ns (CLOCK_MONOTONIC)
  __u64 last_ns;
  __u64 payload_bytes;
  __u64 packets;  // 0: no burst open
  __u32 turn;     // the socket's turns when the burst began
  __u16 local_port;
  __u16 peer_port;
};

// What the programs keep on each socket they see: 184 bytes. The pod on a
// cache line of its own: a socket's data packets go one way and its ACKs
// the other, often on another CPU, which only reads the pod (with the pod
// and the bursts on one line the programs measured 195-205 ns a run against
// 174-193 apart; the two bursts apart from each other too, 192 bytes, were
// no faster).
struct socket_state {
  __u64 pod;         // pod cgroup id, 0 for a socket of no known pod
  __u64 generation;  // pods_generation + 1 when `pod` was looked up
  __u64 pad[6];
  struct socket_burst bursts[2];  // by enum peer_flows_direction
  // Times the socket's payload changed direction, and the direction of the
  // last payload (+1; 0 before any). A request and its response are two
  // turns; the pieces a contended link cuts one response into share one.
  __u32 turns;
  __u8 last_payload_direction;
  __u8 pad_end[3];
};

struct {
  __uint(type, BPF_MAP_TYPE_SK_STORAGE);
  __uint(map_flags, BPF_F_NO_PREALLOC);
  __type(key, int);
  __type(value, struct socket_state);
} socket_states SEC(".maps");

// Depths of pod cgroups below the v2 root (Guaranteed pods sit one level
// higher than Burstable/BestEffort ones); 0 ends the list.
__u32 pod_levels[PEER_FLOWS_MAX_POD_LEVELS] = {};

// Finished bursts for user space, drained once per sampling interval.
// 1 MiB holds 14,563 events (72 bytes with the header): 2,900 bursts a
// second at a 5 s interval. The kernel maps the ring twice into the agent
// (for wrap-around reads), so it costs twice its size in RSS.
struct {
  __uint(type, BPF_MAP_TYPE_RINGBUF);
  __uint(max_entries, 1 << 20);
} burst_events SEC(".maps");

// A silence longer than this ends a burst; set by user space before load
// (--step-burst-gap). 0 turns burst tracking off.
const volatile __u64 burst_gap_ns = 20000000;

__u64 burst_events_lost = 0;

// New map entries created; user space derives LRU evictions as
// inserts - live entries because it never deletes.
__u64 inserts = 0;
__u64 insert_failures = 0;

static __always_inline __u64 pod_by_cgroup(struct __sk_buff *skb) {
#pragma unroll
  for (int i = 0; i < PEER_FLOWS_MAX_POD_LEVELS; i++) {
    __u32 level = pod_levels[i];
    if (level == 0) break;
    __u64 id = bpf_skb_ancestor_cgroup_id(skb, level);
    if (id && bpf_map_lookup_elem(&pod_cgroups, &id)) return id;
  }
  return 0;
}

// The pod of the packet's socket, cached on the socket with the socket's
// state (*state, null for a packet without one): the cgroup walk and the pod
// table lookup were about 60 ns of every packet, and a socket's cgroup is
// fixed for its life. The answer stays good while the pod table is unchanged
// (pods_generation); request and time-wait sockets, which have no storage,
// take the walk.
static __always_inline __u64 pod_of(struct __sk_buff *skb,
                                    struct socket_state **state) {
  *state = 0;
  struct bpf_sock *sk = skb->sk;
  if (sk) sk = bpf_sk_fullsock(sk);
  if (!sk) return pod_by_cgroup(skb);
  struct socket_state *cached =
      bpf_sk_storage_get(&socket_states, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
  if (!cached) return pod_by_cgroup(skb);
  *state = cached;
  // Read before the walk: a table change after this read makes the entry
  // stale at once, never the other way round. +1 so a new, zeroed entry
  // is never taken for a valid one.
  const __u64 valid = *(volatile __u64 *)&pods_generation + 1;
  if (cached->generation == valid) return cached->pod;
  __u64 pod = pod_by_cgroup(skb);
  cached->pod = pod;
  cached->generation = valid;
  return pod;
}

#define TCP_FIN_OR_RST 0x05

// Fills ports (and whether a TCP segment closes its connection) and returns
// the L4 header length, 0 when unknown.
static __always_inline __u32 load_ports(struct __sk_buff *skb, __u32 off,
                                        __u8 proto, __u16 *sport, __u16 *dport,
                                        int *closing) {
  if (proto == IPPROTO_TCP_) {
    __u8 h[14];
    if (bpf_skb_load_bytes(skb, off, h, sizeof(h))) return 0;
    *sport = (__u16)h[0] << 8 | h[1];
    *dport = (__u16)h[2] << 8 | h[3];
    *closing = (h[13] & TCP_FIN_OR_RST) != 0;
    return (h[12] >> 4) * 4;
  }
  if (proto == IPPROTO_UDP_) {
    __u8 h[4];
    if (bpf_skb_load_bytes(skb, off, h, sizeof(h))) return 0;
    *sport = (__u16)h[0] << 8 | h[1];
    *dport = (__u16)h[2] << 8 | h[3];
    return 8;
  }
  return 0;
}

static __always_inline int is_v6_loopback(const __u8 *a) {
  __u8 any = 0;
#pragma unroll
  for (int i = 0; i < 15; i++) any |= a[i];
  return any == 0 && a[15] == 1;
}

static __always_inline void send_burst(struct socket_burst *b, __u64 pod,
                                       __u8 direction) {
  struct peer_burst_event *ev =
      bpf_ringbuf_reserve(&burst_events, sizeof(*ev), 0);
  if (ev) {
    ev->pod_cgroup_id = pod;
    __builtin_memcpy(ev->peer_addr, b->peer_addr, 16);
    ev->start_ns = b->start_ns;
    ev->end_ns = b->last_ns;
    ev->payload_bytes = b->payload_bytes;
    ev->packets = (__u32)b->packets;
    ev->turn = b->turn;
    ev->local_port = b->local_port;
    ev->peer_port = b->peer_port;
    ev->direction = direction;
    bpf_ringbuf_submit(ev, 0);
  } else {
    __sync_fetch_and_add(&burst_events_lost, 1);
  }
  b->packets = 0;
}

static __always_inline int same_peer(const __u8 *a, const __u8 *b) {
  return *(const __u64 *)a == *(const __u64 *)b &&
         *(const __u64 *)(a + 8) == *(const __u64 *)(b + 8);
}

// Adds a packet to its socket's burst in `direction`; a silence longer than
// the gap, or another peer, ends the burst before it and sends that to user
// space. A FIN or RST ends both directions' bursts: nothing more will end
// them. Two CPUs handling one socket's packets at once can misplace a
// packet's bytes between bursts; the start times, which the period estimate
// uses, stay right.
static __always_inline void track_burst(struct socket_state *state,
                                        const struct peer_flow_key *flow,
                                        __u64 payload, int closing) {
  if (burst_gap_ns == 0 || !state) return;
  if (payload == 0 && !closing) return;  // pure ACKs are not steps
  const __u8 direction = flow->direction & 1;
  struct socket_burst *b = &state->bursts[direction];
  if (payload) {
    // Written only on a change: a bulk transfer's packets just read it.
    if (state->last_payload_direction != direction + 1) {
      if (state->last_payload_direction) state->turns += 1;
      state->last_payload_direction = direction + 1;
    }
    __u64 now = bpf_ktime_get_ns();
    // Another CPU may have stamped a later time: not a silence.
    if (b->packets && ((now > b->last_ns && now - b->last_ns > burst_gap_ns) ||
                       !same_peer(b->peer_addr, flow->peer_addr)))
      send_burst(b, flow->pod_cgroup_id, direction);
    if (b->packets == 0) {
      __builtin_memcpy(b->peer_addr, flow->peer_addr, 16);
      b->start_ns = now;
      b->payload_bytes = 0;
      b->turn = state->turns;
      b->local_port = flow->local_port;
      b->peer_port = flow->peer_port;
    }
    b->payload_bytes += payload;
    b->packets += 1;
    b->last_ns = now;
  }
  if (closing) {
    if (state->bursts[0].packets)
      send_burst(&state->bursts[0], flow->pod_cgroup_id, 0);
    if (state->bursts[1].packets)
      send_burst(&state->bursts[1], flow->pod_cgroup_id, 1);
  }
}

// Reading headers in place (direct packet access) needs CAP_PERFMON in
// cgroup_skb programs; without it user space loads the programs with this
// off and the headers are copied out with bpf_skb_load_bytes. The verifier
// drops the branch not taken.
const volatile __u8 read_headers_in_place = 1;

// IPv4 and TCP headers, read in place when the skb's linear part holds them
// (it nearly always does: the two bpf_skb_load_bytes calls this saves were
// 10-15 ns a packet), copied out otherwise. False to skip the packet.
static __always_inline int ipv4_headers(struct __sk_buff *skb, __u8 direction,
                                        struct peer_flow_key *key, __u16 *sport,
                                        __u16 *dport, __u32 *headers,
                                        int *closing) {
  struct iphdr ip;
  void *data = 0, *data_end = 0;
  int in_place = 0;
  if (read_headers_in_place) {
    data = (void *)(long)skb->data;
    data_end = (void *)(long)skb->data_end;
    if (data + sizeof(ip) <= data_end) {
      __builtin_memcpy(&ip, data, sizeof(ip));
      in_place = 1;
    }
  }
  if (!in_place && bpf_skb_load_bytes(skb, 0, &ip, sizeof(ip))) return 0;
  __u32 ihl = ip.ihl * 4;
  *headers = ihl;
  key->protocol = ip.protocol;
  key->peer_addr[10] = 0xff;
  key->peer_addr[11] = 0xff;
  __builtin_memcpy(&key->peer_addr[12],
                   direction == PEER_FLOWS_RECEIVE ? &ip.saddr : &ip.daddr, 4);
  // Loopback stays inside the pod: not traffic between pods.
  if (key->peer_addr[12] == 127) return 0;
  // Only the first fragment carries ports.
  if ((bpf_ntohs(ip.frag_off) & 0x1fff) != 0) return 1;
  if (in_place && ip.protocol == IPPROTO_TCP_ && ihl >= sizeof(ip) &&
      ihl <= 60) {
    __u8 *tcp = data + ihl;
    if ((void *)(tcp + 14) <= data_end) {
      *sport = (__u16)tcp[0] << 8 | tcp[1];
      *dport = (__u16)tcp[2] << 8 | tcp[3];
      *headers += (tcp[12] >> 4) * 4;
      *closing = (tcp[13] & TCP_FIN_OR_RST) != 0;
      return 1;
    }
  }
  *headers += load_ports(skb, ihl, ip.protocol, sport, dport, closing);
  return 1;
}

static __always_inline void account(struct __sk_buff *skb, __u8 direction) {
  struct socket_state *state;
  __u64 pod = pod_of(skb, &state);
  if (!pod) return;

  struct peer_flow_key key = {};
  key.pod_cgroup_id = pod;
  key.direction = direction;
  __u16 sport = 0, dport = 0;
  __u32 headers = 0;
  int closing = 0;
  if (skb->protocol == bpf_htons(ETH_P_IP)) {
    if (!ipv4_headers(skb, direction, &key, &sport, &dport, &headers, &closing))
      return;
  } else if (skb->protocol == bpf_htons(ETH_P_IPV6)) {
    struct ipv6hdr ip6;
    if (bpf_skb_load_bytes(skb, 0, &ip6, sizeof(ip6))) return;
    headers = sizeof(ip6);
    key.protocol = ip6.nexthdr;
    __builtin_memcpy(key.peer_addr,
                     direction == PEER_FLOWS_RECEIVE ? &ip6.saddr : &ip6.daddr,
                     16);
    if (is_v6_loopback(key.peer_addr)) return;
    headers +=
        load_ports(skb, sizeof(ip6), ip6.nexthdr, &sport, &dport, &closing);
  } else {
    return;
  }
  if (direction == PEER_FLOWS_RECEIVE) {
    key.local_port = dport;
    key.peer_port = sport;
  } else {
    key.local_port = sport;
    key.peer_port = dport;
  }

  __u64 len = skb->len;
  __u64 payload = len > headers ? len - headers : 0;
  track_burst(state, &key, payload, closing);
  struct peer_flow_value *value = bpf_map_lookup_elem(&peer_flows, &key);
  if (value) {
    // Per-CPU value: no other CPU writes this slot.
    value->bytes += len;
    value->payload_bytes += payload;
    value->packets += 1;
    return;
  }
  struct peer_flow_value init = {
      .bytes = len, .payload_bytes = payload, .packets = 1};
  long err = bpf_map_update_elem(&peer_flows, &key, &init, BPF_NOEXIST);
  if (err == 0) {
    __sync_fetch_and_add(&inserts, 1);
  } else {
    // Another CPU created the entry first: add to our own slot.
    value = bpf_map_lookup_elem(&peer_flows, &key);
    if (value) {
      value->bytes += len;
      value->payload_bytes += payload;
      value->packets += 1;
    } else {
      __sync_fetch_and_add(&insert_failures, 1);
    }
  }
}

SEC("cgroup_skb/ingress")
int peer_flows_ingress(struct __sk_buff *skb) {
  account(skb, PEER_FLOWS_RECEIVE);
  return 1;  // observe only, never drop
}

SEC("cgroup_skb/egress")
int peer_flows_egress(struct __sk_buff *skb) {
  account(skb, PEER_FLOWS_TRANSMIT);
  return 1;
}
