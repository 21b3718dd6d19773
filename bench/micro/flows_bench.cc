// The flows collector's user-space work per interval at 10k flow entries:
// draining the BPF map's batch (unpack keys, sum per-CPU slots, turn
// cumulative readings into deltas) and resolving the deltas to pod pairs.
// Pure parts only: the batch is synthetic, no BPF map is touched.
#include <benchmark/benchmark.h>

#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "flows/flow_map.h"
#include "flows/peers.h"

namespace trainscope {
namespace {

constexpr int kLocalPods = 110;
constexpr int kClusterPods = 2000;  // peers: every pod of a large job
constexpr size_t kCpus = 16;
constexpr size_t kStride = sizeof(peer_flow_value);  // already 8-aligned

IpAddress PodAddress(int i) {
  uint8_t octets[4] = {10, static_cast<uint8_t>(i / 250),
                       static_cast<uint8_t>(i % 250 + 1), 7};
  return IpAddress::V4(octets);
}

// `entries` flows spread over the local pods, each with a cluster peer.
FlowKey SyntheticKey(int i) {
  FlowKey key;
  key.pod.cgroup_id = 1000 + static_cast<uint64_t>(i % kLocalPods);
  key.peer = PodAddress((i * 7919) % kClusterPods);
  key.local_port = static_cast<uint16_t>(2222 + i % 3);
  key.peer_port = static_cast<uint16_t>(30000 + i / 3 % 30000);
  key.direction = i % 2 ? FlowDirection::kTransmit : FlowDirection::kReceive;
  key.protocol = 6;
  return key;
}

// What one batch lookup hands back: raw keys and per-CPU values.
struct RawBatch {
  std::vector<peer_flow_key> keys;
  std::vector<uint8_t> values;  // keys.size() * kCpus * kStride
};

RawBatch SyntheticBatch(int entries, uint64_t round) {
  RawBatch batch;
  batch.keys.reserve(entries);
  batch.values.resize(static_cast<size_t>(entries) * kCpus * kStride);
  for (int i = 0; i < entries; ++i) {
    batch.keys.push_back(PackFlowKey(SyntheticKey(i)));
    for (size_t cpu = 0; cpu < kCpus; ++cpu) {
      peer_flow_value v{(round + 1) * 1500 * (cpu + 1), (round + 1) * 1400,
                        round + 1};
      std::memcpy(&batch.values[(i * kCpus + cpu) * kStride], &v, sizeof v);
    }
  }
  return batch;
}

std::vector<std::pair<FlowKey, FlowCounters>> Drain(const RawBatch& batch) {
  std::vector<std::pair<FlowKey, FlowCounters>> out;
  out.reserve(batch.keys.size());
  for (size_t i = 0; i < batch.keys.size(); ++i) {
    out.emplace_back(
        UnpackFlowKey(batch.keys[i]),
        SumPerCpu(&batch.values[i * kCpus * kStride], kCpus, kStride));
  }
  return out;
}

// Unpack + per-CPU sums + deltas against the previous drain, as each
// interval does after the batch lookup.
void BM_FlowMapDrain(benchmark::State& state) {
  const int entries = static_cast<int>(state.range(0));
  RawBatch first = SyntheticBatch(entries, 0);
  RawBatch second = SyntheticBatch(entries, 1);
  CounterTracker tracker;
  tracker.Update(Drain(first));
  bool flip = false;
  size_t deltas = 0;
  for (auto _ : state) {
    // Alternate so counters go up, then "reset" (LRU re-creation) — both
    // code paths of the tracker are exercised, each delta is non-empty.
    auto current = Drain(flip ? first : second);
    auto d = tracker.Update(current);
    deltas = d.size();
    benchmark::DoNotOptimize(d);
    flip = !flip;
  }
  state.counters["entries"] = entries;
  state.counters["deltas"] = static_cast<double>(deltas);
}
BENCHMARK(BM_FlowMapDrain)->Arg(10000)->Unit(benchmark::kMillisecond);

PodList ClusterPods() {
  PodList pods;
  for (int i = 0; i < kClusterPods; ++i) {
    PodInfo pod;
    pod.uid = "uid-" + std::to_string(i);
    pod.namespace_name = "training";
    pod.name = "job-" + std::to_string(i / 100) + "-pod-" + std::to_string(i);
    pod.node = i < kLocalPods ? "node-a" : "node-" + std::to_string(i / 110);
    pod.pod_ip = PodAddress(i).ToString();
    pod.pod_ips = {pod.pod_ip};
    pod.training_job = "job-" + std::to_string(i / 100);
    pod.role = i % 100 < 4 ? Role::kPs : Role::kWorker;
    pods.push_back(std::move(pod));
  }
  return pods;
}

// Per interval: build the resolver from this node's pod table and the other
// nodes' pods, attribute 10k deltas to (local pod, peer pod) pairs, and
// produce the peer samples.
void BM_PeerResolution(benchmark::State& state) {
  const int entries = static_cast<int>(state.range(0));
  const PodList cluster = ClusterPods();
  const PodList pods(cluster.begin(), cluster.begin() + kLocalPods);
  const PodList peer_pods(cluster.begin() + kLocalPods, cluster.end());
  std::map<uint64_t, std::string> cgroup_to_uid;
  std::set<std::string> local;
  for (int i = 0; i < kLocalPods; ++i) {
    cgroup_to_uid[1000 + i] = pods[i].uid;
    local.insert(pods[i].uid);
  }
  std::vector<FlowDelta> deltas;
  for (int i = 0; i < entries; ++i) {
    deltas.push_back({SyntheticKey(i), {1500, 1400, 1}});
  }
  PeerLedger ledger;
  size_t samples = 0;
  for (auto _ : state) {
    PeerResolver resolver(pods, cgroup_to_uid, local, &peer_pods);
    ledger.Add(deltas, resolver);
    ledger.Prune(pods, &peer_pods);
    auto s = ledger.Samples(pods, &peer_pods);
    samples = s.size();
    benchmark::DoNotOptimize(s);
  }
  state.counters["entries"] = entries;
  state.counters["pairs"] = static_cast<double>(samples);
}
BENCHMARK(BM_PeerResolution)->Arg(10000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainscope
