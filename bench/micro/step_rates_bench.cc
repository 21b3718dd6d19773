// The step-rate estimate's user-space work per interval at 110 local
// workers, each exchanging with 2 PS in both directions (440 streams, up to
// 512 bursts each, the most a stream keeps): StepRateTracker's Add, Prune
// and Rates, which estimates the streams due over their windows and scales,
// interval after interval. Three trains:
// whole exchanges (one burst per step, the common case), exchanges cut
// into pieces at irregular points with no connection known (a contended
// link: every scale and both estimates are tried before one shows a
// period, the costly case), and the same pieces with their connections and
// turns, as the kernel reports them (the turns join them first), at the
// benchmark's 0.25 s steps (the pieces fill most of a step, so consecutive
// exchanges come within the gap and join: not whole, both paths run); then
// the cut train without and with turns at cluster-uplink-saturated's 0.7 s
// steps (the turns' exchanges whole).
#include <benchmark/benchmark.h>

#include <random>
#include <set>
#include <string>
#include <vector>

#include "flows/step_rates.h"

namespace trainscope {
namespace {

constexpr int kWorkers = 110;
constexpr int kPs = 2;
constexpr double kStepS = 0.25;

std::string Ip(int i) {
  return "10.1." + std::to_string(i / 250) + "." + std::to_string(i % 250 + 1);
}

PodInfo Pod(int i, Role role) {
  PodInfo p;
  p.uid = (role == Role::kPs ? "ps-" : "worker-") + std::to_string(i);
  p.name = p.uid;
  p.namespace_name = "training";
  p.training_job = "job";
  p.role = role;
  p.phase = "Running";
  p.pod_ip = Ip(role == Role::kPs ? 1000 + i : i);
  return p;
}

struct Fleet {
  PodList local, peers;
  std::map<uint64_t, std::string> cgroups;
  std::set<std::string> local_uids;
};

Fleet MakeFleet() {
  Fleet f;
  for (int w = 0; w < kWorkers; ++w) {
    f.local.push_back(Pod(w, Role::kWorker));
    f.cgroups[1000 + static_cast<uint64_t>(w)] = f.local.back().uid;
    f.local_uids.insert(f.local.back().uid);
  }
  for (int p = 0; p < kPs; ++p) f.peers.push_back(Pod(p, Role::kPs));
  return f;
}

// The bursts of every (worker, PS, direction), interval by interval: a
// 400 kB exchange per step, whole or cut into 2 to 6 pieces with 25-60 ms
// silences; with turns, each (worker, PS, direction) on a connection of its
// own whose turn moves on by two a step (the request between).
class BurstSource {
 public:
  BurstSource(bool cut, bool turns, double step_s)
      : cut_(cut), turns_(turns), step_s_(step_s) {}

  // The bursts of the steps that start before `until`.
  std::vector<BurstEvent> Until(double until) {
    std::uniform_int_distribution<int> pieces(2, 6);
    std::uniform_real_distribution<double> silence(0.025, 0.06), phase(0, 0.05);
    std::vector<BurstEvent> out;
    for (; next_step_ < until; next_step_ += step_s_, ++step_)
      for (int w = 0; w < kWorkers; ++w)
        for (int p = 0; p < kPs; ++p)
          for (FlowDirection dir :
               {FlowDirection::kReceive, FlowDirection::kTransmit}) {
            BurstEvent e;
            e.pod.cgroup_id = 1000 + static_cast<uint64_t>(w);
            e.peer = *IpAddress::Parse(Ip(1000 + p));
            e.direction = dir;
            if (turns_) {
              e.local_port = static_cast<uint16_t>(
                  40000 + 2 * p + (dir == FlowDirection::kTransmit));
              e.peer_port = 2222;
              e.turn = 2 * step_ + 1;
            }
            const int n = cut_ ? pieces(rng_) : 1;
            double at = next_step_ + phase(rng_);
            for (int k = 0; k < n; ++k) {
              e.start_s = at;
              e.end_s = at + 0.005;
              e.payload_bytes = 400'000 / static_cast<uint64_t>(n);
              out.push_back(e);
              at = e.end_s + silence(rng_);
            }
          }
    return out;
  }

 private:
  bool cut_;
  bool turns_;
  double step_s_;
  uint32_t step_ = 0;
  std::mt19937 rng_{1};
  double next_step_ = 0;
};

// One agent interval after 130 s of training: the interval's bursts added,
// old ones pruned, every stream's rate (estimated anew when due).
void BM_StepRates(benchmark::State& state) {
  constexpr double kIntervalS = 5;
  const Fleet fleet = MakeFleet();
  const PeerResolver resolver(fleet.local, fleet.cgroups, fleet.local_uids,
                              &fleet.peers);
  StepRateTracker tracker;
  const int64_t mode = state.range(0);
  BurstSource source(mode != 0, mode == 2 || mode == 4,
                     mode >= 3 ? 0.7 : kStepS);
  double now = 130;
  tracker.Add(source.Until(now), resolver);
  tracker.Rates(now);
  size_t with_rate = 0;
  for (auto _ : state) {
    state.PauseTiming();
    now += kIntervalS;
    const std::vector<BurstEvent> bursts = source.Until(now);
    state.ResumeTiming();
    tracker.Add(bursts, resolver);
    tracker.Prune(fleet.local, &fleet.peers, now);
    auto rates = tracker.Rates(now);
    with_rate = 0;
    for (const auto& [uid, r] : rates) with_rate += r.steps_per_second ? 1 : 0;
    benchmark::DoNotOptimize(rates);
  }
  state.counters["streams"] = static_cast<double>(tracker.streams());
  state.counters["pods_with_rate"] = static_cast<double>(with_rate);
  const char* labels[] = {
      "whole exchanges", "cut exchanges", "cut exchanges, turns known",
      "cut exchanges, 0.7 s steps", "cut exchanges, turns known, 0.7 s steps"};
  state.SetLabel(labels[mode]);
}
BENCHMARK(BM_StepRates)
    ->Arg(0)
    ->Arg(1)
    ->Arg(2)
    ->Arg(3)
    ->Arg(4)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace trainscope
