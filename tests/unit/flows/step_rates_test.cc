#include "flows/step_rates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <deque>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "flows/burst.h"

namespace trainscope {
namespace {

PodInfo Pod(const std::string& uid, const std::string& name,
            const std::string& ip, Role role) {
  PodInfo p;
  p.uid = uid;
  p.namespace_name = "training";
  p.name = name;
  p.pod_ip = ip;
  p.phase = "Running";
  p.role = role;
  return p;
}

class StepRateTrackerTest : public ::testing::Test {
 protected:
  StepRateTrackerTest() {
    pods_ = {Pod("w0", "job-worker-0", "198.18.0.10", Role::kWorker),
             Pod("ps0", "job-ps-0", "198.18.0.20", Role::kPs),
             Pod("ps1", "job-ps-1", "198.18.0.21", Role::kPs)};
  }

  PeerResolver Resolver() const {
    return PeerResolver(pods_, {{11, "w0"}}, {"w0"});
  }

  // Bursts of worker-0 with `peer_ip` every `period` from t0, `n` of them.
  std::vector<BurstEvent> Train(const std::string& peer_ip, double t0,
                                double period, int n,
                                FlowDirection dir = FlowDirection::kReceive,
                                uint64_t bytes = 500'000) const {
    std::vector<BurstEvent> out;
    for (int k = 0; k < n; ++k) {
      BurstEvent e;
      e.pod.cgroup_id = 11;
      e.peer = *IpAddress::Parse(peer_ip);
      e.direction = dir;
      e.start_s = t0 + k * period;
      e.end_s = e.start_s + 0.01;
      e.payload_bytes = bytes;
      e.packets = 10;
      out.push_back(e);
    }
    return out;
  }

  PodList pods_;
};

TEST_F(StepRateTrackerTest, RateFromEveryPeerStream) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(Train("198.18.0.20", 0, 0.5, 80), resolver);
  tracker.Add(Train("198.18.0.21", 0.1, 0.5, 80, FlowDirection::kTransmit),
              resolver);
  const auto rates = tracker.Rates(40);
  ASSERT_TRUE(rates.count("w0"));
  ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0").steps_per_second, 2.0, 0.02);
  EXPECT_EQ(rates.at("w0").streams, 2u);
}

// The saturated-link scenario: the shaped link to ps-0 cuts each exchange
// into pieces of any size whose rhythm (0.3 s here) is not the step's; the
// whole exchanges with ps-1 (one 500 kB burst per step, each direction)
// give the steps.
TEST_F(StepRateTrackerTest, WholeExchangesOutvoteCutOnes) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  auto cut = Train("198.18.0.20", 0, 0.3, 200, FlowDirection::kReceive);
  for (size_t k = 0; k < cut.size(); ++k)
    cut[k].payload_bytes = 20'000 + 37'000 * (k % 5);
  auto cut_tx = cut;
  for (auto& e : cut_tx) e.direction = FlowDirection::kTransmit;
  tracker.Add(cut, resolver);
  tracker.Add(cut_tx, resolver);
  tracker.Add(Train("198.18.0.21", 0, 0.75, 80), resolver);
  tracker.Add(Train("198.18.0.21", 0.1, 0.75, 80, FlowDirection::kTransmit),
              resolver);
  const auto rates = tracker.Rates(60);
  ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0").steps_per_second, 1 / 0.75, 0.02);
  EXPECT_EQ(rates.at("w0").streams, 4u);

  // One whole stream among cut ones (an evaluator's fixed-size reads) is
  // not enough to silence the others.
  StepRateTracker one_whole;
  one_whole.Add(cut, resolver);
  one_whole.Add(cut_tx, resolver);
  one_whole.Add(Train("198.18.0.21", 0, 0.75, 80), resolver);
  ASSERT_TRUE(one_whole.Rates(60).at("w0").steps_per_second.has_value());
  EXPECT_GT(*one_whole.Rates(60).at("w0").steps_per_second, 2.0);
}

TEST(WholeExchangeBytes, OneSizeCarriesTheBytes) {
  const std::vector<BurstPoint> whole = {
      {0, 500'000, 0.1}, {1, 8, 1.0}, {2, 498'000, 2.1}};
  const std::vector<BurstPoint> cut = {
      {0, 65'000, 0.1}, {1, 2'896, 1.0}, {2, 30'000, 2.1}, {3, 120'000, 3.0}};
  ASSERT_TRUE(WholeExchangeBytes(whole).has_value());
  EXPECT_NEAR(*WholeExchangeBytes(whole), 499'000, 1'000);
  EXPECT_FALSE(WholeExchangeBytes(cut).has_value());
  EXPECT_FALSE(WholeExchangeBytes(std::vector<BurstPoint>{}).has_value());
}

TEST_F(StepRateTrackerTest, FollowsARateThatDrops) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(Train("198.18.0.20", 0, 0.5, 120), resolver);   // 0..60 s
  tracker.Add(Train("198.18.0.20", 60, 1.25, 48), resolver);  // 60..120 s
  const auto rates = tracker.Rates(120);
  ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0").steps_per_second, 0.8, 0.02);
}

// An estimate from the short window is made anew every interval.
TEST_F(StepRateTrackerTest, FollowsAChangeWithinSeconds) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(Train("198.18.0.20", 0, 0.25, 240), resolver);  // 0..60 s
  const auto before = tracker.Rates(60);
  ASSERT_TRUE(before.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*before.at("w0").steps_per_second, 4.0, 0.05);
  tracker.Add(Train("198.18.0.20", 60, 0.5, 30), resolver);  // 60..75 s
  const auto rates = tracker.Rates(75);
  ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0").steps_per_second, 2.0, 0.05);
}

// An estimate from a longer window (here every one: the short window never
// holds enough cycles) stands for refresh_s, then the stream is estimated
// anew; a stream that stops gives no rate even while it stands.
TEST_F(StepRateTrackerTest, ALongWindowsEstimateStandsUntilDue) {
  StepRateSettings long_only;
  long_only.short_window_cycles = 1'000'000;
  StepRateTracker tracker(long_only);
  auto resolver = Resolver();
  tracker.Add(Train("198.18.0.20", 0, 0.5, 120), resolver);  // 0..59.5 s
  const auto first = tracker.Rates(60);
  ASSERT_TRUE(first.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*first.at("w0").steps_per_second, 2.0, 0.02);

  tracker.Add(Train("198.18.0.20", 60, 0.25, 40), resolver);  // to 69.75 s
  const auto standing = tracker.Rates(69.9);
  ASSERT_TRUE(standing.at("w0").steps_per_second.has_value());
  EXPECT_DOUBLE_EQ(*standing.at("w0").steps_per_second,
                   *first.at("w0").steps_per_second);

  const auto anew = tracker.Rates(70);
  ASSERT_TRUE(anew.at("w0").steps_per_second.has_value());
  EXPECT_GT(*anew.at("w0").steps_per_second, 2.3);

  StepRateTracker stopping(long_only);
  stopping.Add(Train("198.18.0.20", 0, 0.5, 120), resolver);
  EXPECT_TRUE(stopping.Rates(60).at("w0").steps_per_second.has_value());
  EXPECT_FALSE(stopping.Rates(63).at("w0").steps_per_second.has_value());
}

// A comb over cut exchanges in the short window is made anew every
// interval, as the short window's estimates all are.
TEST_F(StepRateTrackerTest, AShortWindowsCutTrainIsEstimatedEveryInterval) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  auto cut = Train("198.18.0.20", 0, 0.3, 200);  // 0..59.7 s
  for (size_t k = 0; k < cut.size(); ++k)
    cut[k].payload_bytes = 20'000 + 37'000 * (k % 5);
  tracker.Add(cut, resolver);
  const auto first = tracker.Rates(60);
  ASSERT_TRUE(first.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*first.at("w0").steps_per_second, 1 / 0.3, 0.05);

  tracker.Add(Train("198.18.0.20", 60, 0.6, 16), resolver);  // to 69 s
  const auto next = tracker.Rates(69.5);
  ASSERT_TRUE(next.at("w0").steps_per_second.has_value());
  EXPECT_LT(*next.at("w0").steps_per_second, 2.5);  // slower now
}

// Workers contending for one PS: each step's pull comes whole but at a
// phase of the step that varies by up to 60% of it, too irregular for a
// comb, and the worker slows from 0.8 s to 1.2 s steps. Counting the whole
// exchanges of the last seconds follows the change; the 30 s window that
// was used before read 1.06 steps/s here (27% high).
TEST_F(StepRateTrackerTest, FollowsAChangeOfAnIrregularWholeTrain) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> phase(0, 0.6);
  std::vector<BurstEvent> events;
  double step_start = 0;
  auto add_steps = [&](double period, double until) {
    for (; step_start < until; step_start += period) {
      auto pull =
          Train("198.18.0.20", step_start + phase(rng) * period, period, 1);
      events.insert(events.end(), pull.begin(), pull.end());
    }
  };
  add_steps(0.8, 60);
  add_steps(1.2, 75);
  StepRateTracker tracker;
  tracker.Add(events, Resolver());
  const auto rates = tracker.Rates(75);
  ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0").steps_per_second, 1 / 1.2, 0.05);
}

// A stream's first seconds teach it no step size: in
// cluster-uplink-saturated a worker's first 3 s of pushes to one PS looked
// whole at 200 kB, half a step (a 400 kB gradient sent as two bursts before
// the uplink filled), and that stream's count by that size read 2.1 to 2.5
// times too fast for the rest of the run (replayed). Once 12 s of whole
// exchanges are held, the size counts.
TEST_F(StepRateTrackerTest, AYoungStreamLearnsNoStepSize) {
  auto resolver = Resolver();
  StepRateTracker tracker;
  auto learned_size = [&](double now) {
    tracker.Rates(now);
    const auto lines = tracker.Describe(now);
    return lines.size() == 1 &&
           lines[0].find("a step moves 500000B") != std::string::npos;
  };
  tracker.Add(Train("198.18.0.20", 0, 0.25, 20), resolver);  // to 4.75 s
  EXPECT_TRUE(tracker.Rates(5).at("w0").steps_per_second.has_value());
  EXPECT_FALSE(learned_size(5));
  tracker.Add(Train("198.18.0.20", 5, 0.25, 40), resolver);  // to 14.75 s
  EXPECT_TRUE(learned_size(15));
}

// Real PyTorch DDP over gloo, one rank's CPU quota cut to 0.05 cores at
// 60 s: before, one whole 2.8 MB exchange per 0.2 s step; after, the ring
// moves only while that rank runs, once per 100 ms CFS period, 1 to 7
// chunks of 350 kB of a 0.23 s step's gradients each time (measured: this comb
// read 10 steps/s against a true 4.4). The size the stream showed whole counts
// the steps.
TEST_F(StepRateTrackerTest, ACutTrainCountsStepsBySizeSeenWhole) {
  constexpr double kStepBytes = 2'800'000;
  auto resolver = Resolver();
  StepRateTracker tracker;
  auto sample_every_3s = [&](double from, double to) {
    for (double t = from; t < to; t += 3) tracker.Rates(t);
  };
  tracker.Add(Train("198.18.0.20", 0, 0.2, 300, FlowDirection::kReceive,
                    static_cast<uint64_t>(kStepBytes)),
              resolver);
  sample_every_3s(3, 60);
  ASSERT_TRUE(tracker.Rates(60).at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*tracker.Rates(60).at("w0").steps_per_second, 5.0, 0.1);

  std::mt19937 rng(11);
  std::uniform_int_distribution<int> chunks(1, 7);  // of 350 kB
  std::vector<BurstEvent> throttled;
  double pending = 0, next_step = 60;
  for (double tooth = 60.05; tooth < 100; tooth += 0.1) {
    for (; next_step <= tooth; next_step += 0.23) pending += kStepBytes;
    const double sent = std::min(pending, chunks(rng) * 350'000.0);
    pending -= sent;
    if (sent <= 0) continue;
    auto burst = Train("198.18.0.20", tooth, 0.1, 1, FlowDirection::kReceive,
                       static_cast<uint64_t>(sent));
    throttled.insert(throttled.end(), burst.begin(), burst.end());
  }
  tracker.Add(throttled, resolver);
  const auto rates = tracker.Rates(100);
  ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0").steps_per_second, 1 / 0.23, 0.1);

  // The same cut train in a stream never seen whole reads the comb's
  // rhythm: without a size, nothing tells the teeth from the steps
  // (docs/flows.md, "Limits").
  StepRateTracker never_whole;
  never_whole.Add(throttled, resolver);
  const auto comb = never_whole.Rates(100);
  ASSERT_TRUE(comb.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*comb.at("w0").steps_per_second, 10, 0.2);
}

// A link saturated mid-run (issue 31): a real DDP ring's 2.8 MB exchange per
// 0.2 s step, then node-b's uplink shaped to 40 Mbit/s: the traffic runs
// without a silence between steps, in equal pieces at the rhythm TCP and the
// ring's chunks set (8.6 a second against 1.42 steps). One size at a steady
// rhythm looks like whole exchanges; the step size the stream moved before
// tells the pieces from the steps (PiecesOfKnownStep), and a slowdown of
// whole steps or exchanges of the known size stay the steps.
struct SaturatedCase {
  const char* name;
  double piece_bytes;    // of each burst once the link is saturated
  double piece_every_s;  // their rhythm
  double true_rate;      // bytes/s over the 2.8 MB step
};

TEST_F(StepRateTrackerTest, ASaturatedLinksPiecesCountOverTheKnownStepSize) {
  constexpr double kStepBytes = 2'800'000;
  const SaturatedCase cases[] = {
      // The DDP ring through the shaped uplink: 8 pieces a step.
      {"ring chunks", 350'000, 0.1, 350'000 / 0.1 / kStepBytes},
      {"TCP pieces", 460'000, 0.1166, 460'000 / 0.1166 / kStepBytes},
      // Half a step per piece: two pieces a step, at the threshold's far
      // side (1.5).
      {"halves", 1'400'000, 0.35, 1'400'000 / 0.35 / kStepBytes},
      // Not pieces: whole steps of the known size, slower (a straggler,
      // a link shaped below the step's burst rate but with silences).
      {"slower whole steps", kStepBytes, 0.7, 1 / 0.7},
      // Not pieces: the small bursts beside a step (requests) do not make
      // the exchange a fraction of the step (real TF1: 262 of 280 kB).
      {"whole with requests", 0.94 * kStepBytes, 0.5, 1 / 0.5},
  };
  auto resolver = Resolver();
  for (const SaturatedCase& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<BurstEvent> saturated;
    for (double t = 60; t < 100; t += c.piece_every_s) {
      auto piece = Train("198.18.0.20", t, 1, 1, FlowDirection::kReceive,
                         static_cast<uint64_t>(c.piece_bytes));
      piece[0].end_s = t + 0.6 * c.piece_every_s;  // busy, then a TCP stall
      saturated.push_back(piece[0]);
    }
    StepRateTracker tracker;
    tracker.Add(Train("198.18.0.20", 0, 0.2, 300, FlowDirection::kReceive,
                      static_cast<uint64_t>(kStepBytes)),
                resolver);
    for (double t = 3; t < 60; t += 3) tracker.Rates(t);
    tracker.Add(saturated, resolver);
    for (double t = 63; t < 100; t += 3) tracker.Rates(t);
    const auto rates = tracker.Rates(100);
    ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
    EXPECT_NEAR(*rates.at("w0").steps_per_second, c.true_rate,
                0.05 * c.true_rate);

    // Without a step size seen whole (a stream saturated from its first
    // step), the same train busy 60% of the time is link-bound: no rate,
    // where its rhythm was read until issue 31 (step_rates_saturated_test).
    StepRateTracker never_whole;
    never_whole.Add(saturated, resolver);
    EXPECT_FALSE(never_whole.Rates(100).at("w0").steps_per_second.has_value());
  }
}

TEST(PiecesOfKnownStep, OnlyWholeTrainsAFractionOfTheStep) {
  PeriodEstimate e;
  e.whole_exchanges = true;
  e.step_bytes = 350'000;
  EXPECT_TRUE(PiecesOfKnownStep(e, 2'800'000));
  e.step_bytes = 1'866'666;  // 1.5 pieces a step
  EXPECT_TRUE(PiecesOfKnownStep(e, 2'800'000));
  e.step_bytes = 1'900'000;
  EXPECT_FALSE(PiecesOfKnownStep(e, 2'800'000));
  e.step_bytes = 5'600'000;  // two steps joined: the comb's business
  EXPECT_FALSE(PiecesOfKnownStep(e, 2'800'000));
  e.step_bytes = 0;  // size unknown
  EXPECT_FALSE(PiecesOfKnownStep(e, 2'800'000));
  e.step_bytes = 350'000;
  e.whole_exchanges = false;  // cut trains count by size anyway
  EXPECT_FALSE(PiecesOfKnownStep(e, 2'800'000));
}

// An IO stall stretches a 0.4 s step to 4 s: three long gaps in a row
// override the window's estimate, which still holds the fast steps.
TEST_F(StepRateTrackerTest, FollowsASlowdownAfterThreeSteps) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(Train("198.18.0.20", 0, 0.4, 50), resolver);  // 0..20 s
  tracker.Add(Train("198.18.0.20", 20, 4.0, 4), resolver);  // 20..32 s
  const auto rates = tracker.Rates(33);
  ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0").steps_per_second, 0.25, 0.02);
}

TEST(RecentChange, NoneWhileTheGapsAgreeWithThePeriod) {
  std::vector<BurstPoint> bursts;
  for (int i = 0; i < 20; ++i) bursts.push_back({i * 0.5, 1000, i * 0.5});
  EXPECT_FALSE(RecentChange(bursts, 0.5).has_value());
  bursts.push_back({9.5 + 2.0, 1000, 11.5});  // one long gap is not enough
  EXPECT_FALSE(RecentChange(bursts, 0.5).has_value());
}

TEST_F(StepRateTrackerTest, StalledStreamGivesNoRate) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(Train("198.18.0.20", 0, 0.5, 80), resolver);  // ends at 40 s
  EXPECT_TRUE(tracker.Rates(40).at("w0").steps_per_second.has_value());
  const auto later = tracker.Rates(45);
  EXPECT_FALSE(later.at("w0").steps_per_second.has_value());
  EXPECT_EQ(later.at("w0").streams_seen, 1u);
}

TEST_F(StepRateTrackerTest, UnknownPeerOrPodIsDropped) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(Train("198.18.9.9", 0, 0.5, 80), resolver);
  auto strange = Train("198.18.0.20", 0, 0.5, 80);
  for (auto& e : strange) e.pod.cgroup_id = 99;
  tracker.Add(strange, resolver);
  EXPECT_EQ(tracker.streams(), 0u);
  EXPECT_TRUE(tracker.Rates(40).empty());
}

TEST_F(StepRateTrackerTest, ClockGoingBackResetsTheStream) {
  // A source that starts again (pcap reopened, re-created map entry) may
  // report times before the newest one: the old train is dropped, not
  // mixed in.
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(Train("198.18.0.20", 1000, 0.5, 80), resolver);
  tracker.Add(Train("198.18.0.20", 10, 0.4, 100), resolver);
  const auto rates = tracker.Rates(50);
  ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0").steps_per_second, 2.5, 0.03);
}

TEST_F(StepRateTrackerTest, RestartedPodStartsOverAndTheOldOneIsForgotten) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(Train("198.18.0.20", 0, 0.5, 80), resolver);
  // worker-0 restarts: a new pod (uid) on the same address and cgroup id.
  pods_[0].uid = "w0-b";
  PeerResolver after(pods_, {{11, "w0-b"}}, {"w0-b"});
  tracker.Prune(pods_, nullptr, 45);
  EXPECT_EQ(tracker.streams(), 0u);
  tracker.Add(Train("198.18.0.20", 50, 0.25, 160), after);
  const auto rates = tracker.Rates(90);
  EXPECT_FALSE(rates.count("w0"));
  ASSERT_TRUE(rates.at("w0-b").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0-b").steps_per_second, 4.0, 0.05);
}

TEST_F(StepRateTrackerTest, PruneDropsOldBursts) {
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(Train("198.18.0.20", 0, 0.5, 20), resolver);
  tracker.Prune(pods_, nullptr, 500);
  EXPECT_EQ(tracker.streams(), 0u);
}

// Ranks r0.. of the allreduce job "ar" (no PS).
PodList AllreduceRanks(int n) {
  PodList pods;
  for (int i = 0; i < n; ++i) {
    PodInfo p = Pod("r" + std::to_string(i), "ar-worker-" + std::to_string(i),
                    "198.18.1." + std::to_string(i + 1), Role::kWorker);
    p.training_job = "ar";
    pods.push_back(p);
  }
  return pods;
}

TEST(ReconcileRanks, AllreduceRanksMustAgree) {
  PodList pods = AllreduceRanks(3);
  PodInfo w = Pod("w0", "job-worker-0", "198.18.0.10", Role::kWorker);
  w.training_job = "job";
  PodInfo ps = Pod("ps0", "job-ps-0", "198.18.0.20", Role::kPs);
  ps.training_job = "job";
  pods.push_back(w);
  pods.push_back(ps);
  std::map<std::string, StepRate> agree = {
      {"r0", {2.0}}, {"r1", {2.1}}, {"r2", {1.95}}, {"w0", {5.0}}};
  ReconcileRanks(agree, pods, nullptr);
  EXPECT_TRUE(agree["r0"].steps_per_second && agree["r2"].steps_per_second);
  EXPECT_FALSE(agree["r0"].from_job_ranks);
  std::map<std::string, StepRate> paced = {
      {"r0", {4.0}}, {"r1", {3.0}}, {"r2", {5.7}}, {"w0", {5.0}}};
  ReconcileRanks(paced, pods, nullptr);
  EXPECT_FALSE(paced["r0"].steps_per_second.has_value());
  EXPECT_FALSE(paced["r2"].steps_per_second.has_value());
  // A PS job's workers step at their own pace: never withdrawn.
  EXPECT_TRUE(paced["w0"].steps_per_second.has_value());
}

// A rank with exchanges seen but no rate of its own.
StepRate SeenWithoutPeriod() {
  StepRate r;
  r.streams_seen = 2;
  return r;
}

TEST(ReconcileRanks, AMisreadRankTakesTheRateItsMajorityAgreesOn) {
  PodList pods = AllreduceRanks(4);
  using Rates = std::map<std::string, std::optional<double>>;
  struct Case {
    const char* name;
    std::map<std::string, StepRate> rates;
    Rates want;
  };
  const Case cases[] = {
      {"three agree, one read its cut streams' rhythm: it takes theirs",
       {{"r0", {2.0}}, {"r1", {2.05}}, {"r2", {1.98}}, {"r3", {3.1}}},
       {{"r0", 2.0}, {"r1", 2.05}, {"r2", 1.98}, {"r3", 2.0}}},
      {"three agree, one seen without a period: it takes theirs",
       {{"r0", {2.0}},
        {"r1", {2.1}},
        {"r2", {2.05}},
        {"r3", SeenWithoutPeriod()}},
       {{"r0", 2.0}, {"r1", 2.1}, {"r2", 2.05}, {"r3", 2.05}}},
      {"two against two: no majority, nothing is trusted",
       {{"r0", {2.0}}, {"r1", {2.05}}, {"r2", {3.0}}, {"r3", {3.1}}},
       {{"r0", {}}, {"r1", {}}, {"r2", {}}, {"r3", {}}}},
      {"two ranks that disagree: neither can be told right",
       {{"r0", {2.0}}, {"r1", {3.0}}},
       {{"r0", {}}, {"r1", {}}}},
      {"two of three seen agree: a majority, the third takes their median",
       {{"r0", {2.0}}, {"r1", {2.1}}, {"r2", {3.0}}, {"r3", {}}},
       {{"r0", 2.0}, {"r1", 2.1}, {"r2", 2.05}, {"r3", {}}}},
      {"two agree of four seen: kept, the others left without a rate",
       {{"r0", {2.0}},
        {"r1", {2.1}},
        {"r2", SeenWithoutPeriod()},
        {"r3", SeenWithoutPeriod()}},
       {{"r0", 2.0}, {"r1", 2.1}, {"r2", {}}, {"r3", {}}}},
  };
  for (const Case& c : cases) {
    auto rates = c.rates;
    ReconcileRanks(rates, pods, nullptr);
    Rates got;
    for (const auto& [uid, r] : rates) {
      got[uid] = r.steps_per_second;
      EXPECT_EQ(r.from_job_ranks,
                r.steps_per_second &&
                    (!c.rates.at(uid).steps_per_second ||
                     *c.rates.at(uid).steps_per_second != *r.steps_per_second))
          << c.name << ": " << uid;
    }
    EXPECT_EQ(got, c.want) << c.name;
  }
}

TEST(AddToTrain, JoinsOverlappingAndNearPiecesOnly) {
  using Train = std::deque<BurstPoint>;
  struct Case {
    const char* name;
    Train train;
    BurstPoint piece;
    Train want;
    double added_s;
  };
  const double gap = 0.02;
  const Case cases[] = {
      {"into an empty train", {}, {1.0, 10, 1.5}, {{1.0, 10, 1.5}}, 0.5},
      {"after the newest",
       {{1.0, 10, 1.5}},
       {2.0, 5, 2.1},
       {{1.0, 10, 1.5}, {2.0, 5, 2.1}},
       0.1},
      {"late, between two",
       {{1.0, 10, 1.1}, {3.0, 10, 3.1}},
       {2.0, 5, 2.2},
       {{1.0, 10, 1.1}, {2.0, 5, 2.2}, {3.0, 10, 3.1}},
       0.2},
      {"overlapping the newest",
       {{1.0, 10, 1.5}},
       {1.2, 5, 1.8},
       {{1.0, 15, 1.8}},
       0.3},
      {"inside one already there",
       {{1.0, 10, 1.5}},
       {1.1, 5, 1.2},
       {{1.0, 15, 1.5}},
       0.0},
      {"within the gap of the one before",
       {{1.0, 10, 1.5}},
       {1.515, 5, 1.6},
       {{1.0, 15, 1.6}},
       0.1},
      {"just beyond the gap",
       {{1.0, 10, 1.5}},
       {1.53, 5, 1.6},
       {{1.0, 10, 1.5}, {1.53, 5, 1.6}},
       0.07},
      {"bridging two",
       {{1.0, 10, 1.1}, {1.2, 10, 1.3}},
       {1.09, 5, 1.21},
       {{1.0, 25, 1.3}},
       0.1},
      {"starting earlier, reaching the next",
       {{1.0, 10, 1.1}, {2.0, 10, 2.1}},
       {1.5, 5, 2.05},
       {{1.0, 10, 1.1}, {1.5, 15, 2.1}},
       0.5},
  };
  for (const Case& c : cases) {
    Train train = c.train;
    const double added = AddToTrain(&train, c.piece, gap);
    EXPECT_NEAR(added, c.added_s, 1e-9) << c.name;
    ASSERT_EQ(train.size(), c.want.size()) << c.name;
    for (size_t i = 0; i < train.size(); ++i) {
      EXPECT_DOUBLE_EQ(train[i].start_s, c.want[i].start_s) << c.name;
      EXPECT_DOUBLE_EQ(train[i].end_s, c.want[i].end_s) << c.name;
      EXPECT_EQ(train[i].bytes, c.want[i].bytes) << c.name;
    }
  }
}

TEST_F(StepRateTrackerTest, APeersConnectionsMakeOneTrainInAnyOrder) {
  // Three connections to ps0 each carry a third of every 0.5 s step's
  // exchange; the kernel reports each connection's piece when that
  // connection next sends, so the pieces of one step come in no order and
  // a connection's may come a cycle late. They are one exchange a step.
  std::vector<BurstEvent> pieces;
  for (int conn = 0; conn < 3; ++conn) {
    auto train = Train("198.18.0.20", 100 + 0.002 * conn, 0.5, 80,
                       FlowDirection::kReceive, 200'000);
    pieces.insert(pieces.end(), train.begin(), train.end());
  }
  std::mt19937 rng(7);
  std::shuffle(pieces.begin(), pieces.end(), rng);
  std::stable_sort(pieces.begin(), pieces.end(),
                   [](const auto& a, const auto& b) {
                     // Shuffled only within two-second drain cycles.
                     return static_cast<int>(a.start_s / 2) <
                            static_cast<int>(b.start_s / 2);
                   });
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(pieces, resolver);
  const auto rates = tracker.Rates(140);
  ASSERT_TRUE(rates.at("w0").steps_per_second.has_value());
  EXPECT_NEAR(*rates.at("w0").steps_per_second, 2.0, 0.02);
  const auto lines = tracker.Describe(140);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("80 bursts"), std::string::npos) << lines[0];
}

// cluster-uplink-saturated as the kernel reports it: every exchange with
// both PS crosses a saturated uplink, which cuts it into 2-5 pieces of any
// size 25-150 ms apart, and the steps (0.7 s +-20%) come at irregular
// times. Each piece carries its connection and turn: a response's pieces
// share the turn of its request, the next response is two turns later.
std::vector<BurstEvent> CutRequestsAndResponses(uint32_t seed, int steps,
                                                bool with_connections) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> jitter(0.8, 1.2), gap(0.025, 0.15);
  std::uniform_int_distribution<int> pieces(2, 5);
  std::vector<BurstEvent> out;
  std::map<int, uint32_t> turns;  // by connection (local port)
  auto send = [&](const char* peer, int conn, FlowDirection dir, double t,
                  uint64_t bytes) {
    const int n = bytes > 1000 ? pieces(rng) : 1;
    std::vector<double> cuts(n - 1);
    for (double& c : cuts) c = std::uniform_real_distribution<>(0, 1)(rng);
    cuts.push_back(1);
    std::sort(cuts.begin(), cuts.end());
    double from = 0;
    for (double cut : cuts) {
      BurstEvent e;
      e.pod.cgroup_id = 11;
      e.peer = *IpAddress::Parse(peer);
      e.direction = dir;
      e.start_s = t;
      e.end_s = t + 0.03;
      e.payload_bytes = static_cast<uint64_t>(bytes * (cut - from));
      if (with_connections) {
        e.local_port = static_cast<uint16_t>(conn);
        e.peer_port = 2222;
        e.turn = turns[conn];
      }
      out.push_back(e);
      from = cut;
      t = e.end_s + gap(rng);
    }
    turns[conn] += 1;  // the other side answers next
    return t;
  };
  double t = 100;
  for (int k = 0; k < steps; ++k) {
    double done = t;
    for (int ps = 0; ps < 2; ++ps) {
      const char* peer = ps == 0 ? "198.18.0.20" : "198.18.0.21";
      // The pull: a request, then the variables.
      send(peer, 40000 + ps, FlowDirection::kTransmit, t, 8);
      const double pulled =
          send(peer, 40000 + ps, FlowDirection::kReceive, t + 0.005, 400'000);
      // The gradient pull on the PS's own connection: its request, then
      // the gradient.
      send(peer, 50000 + ps, FlowDirection::kReceive, pulled, 8);
      done = std::max(done, send(peer, 50000 + ps, FlowDirection::kTransmit,
                                 pulled + 0.005, 400'000));
    }
    t = std::max(done, t + 0.7 * jitter(rng));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
  return out;
}

TEST_F(StepRateTrackerTest, TheTurnsJoinExchangesALinkCut) {
  for (uint32_t seed = 1; seed <= 6; ++seed) {
    const auto events = CutRequestsAndResponses(seed, 60, true);
    StepRateTracker tracker;
    auto resolver = Resolver();
    tracker.Add(events, resolver);
    const double now = events.back().end_s;
    const auto rates = tracker.Rates(now);
    ASSERT_TRUE(rates.at("w0").steps_per_second.has_value()) << seed;
    // The true rate: the steps of the estimate's window (the last 12 s), by
    // their pull requests.
    double first = 0, last = 0;
    int steps = 0;
    for (const auto& e : events) {
      if (e.local_port != 40000 || e.payload_bytes != 8 || e.start_s < now - 12)
        continue;
      if (steps++ == 0) first = e.start_s;
      last = e.start_s;
    }
    const double truth = (steps - 1) / (last - first);
    EXPECT_NEAR(*rates.at("w0").steps_per_second / truth, 1, 0.05)
        << "seed " << seed << " truth " << truth;
    EXPECT_EQ(rates.at("w0").streams, 4u) << seed;
    const auto lines = tracker.Describe(now);
    for (const auto& line : lines)
      EXPECT_NE(line.find(" whole turns"), std::string::npos) << line;
  }
}

TEST_F(StepRateTrackerTest, WithoutTurnsTheSameCutPiecesAreNotWhole) {
  // The turns are what join them: the same pieces with no connection read
  // as cut trains, which no stream of whole exchanges outvotes.
  const auto events = CutRequestsAndResponses(1, 60, false);
  StepRateTracker tracker;
  auto resolver = Resolver();
  tracker.Add(events, resolver);
  tracker.Rates(events.back().end_s);
  for (const auto& line : tracker.Describe(events.back().end_s))
    EXPECT_EQ(line.find(" whole"), std::string::npos) << line;
}

TEST_F(StepRateTrackerTest, AOneWayConnectionJoinsNothing) {
  // A connection whose payload only ever flows one way (a ring's send
  // side) has one turn: its exchange never ends, and the rate is the
  // bursts' as if no connection were known.
  auto plain = Train("198.18.0.20", 0, 0.5, 80);
  auto one_way = plain;
  for (auto& e : one_way) {
    e.local_port = 40000;
    e.peer_port = 2222;
  }
  StepRateTracker a, b;
  auto resolver = Resolver();
  a.Add(plain, resolver);
  b.Add(one_way, resolver);
  const auto ra = a.Rates(40), rb = b.Rates(40);
  ASSERT_TRUE(ra.at("w0").steps_per_second.has_value());
  ASSERT_TRUE(rb.at("w0").steps_per_second.has_value());
  EXPECT_DOUBLE_EQ(*ra.at("w0").steps_per_second,
                   *rb.at("w0").steps_per_second);
}

TEST(BurstDetector, AResponsesPiecesShareItsTurn) {
  BurstDetector d(0.02);
  LocalPodRef pod{0, *IpAddress::Parse("198.18.0.10")};
  const IpAddress peer = *IpAddress::Parse("198.18.0.20");
  for (int step = 0; step < 2; ++step) {
    const double t0 = 10 + step;
    d.Add(pod, peer, FlowDirection::kTransmit, t0, 8, 40000, 2222);
    // The response, cut by a 100 ms silence; ACKs carry no payload.
    d.Add(pod, peer, FlowDirection::kReceive, t0 + 0.01, 1448, 40000, 2222);
    d.Add(pod, peer, FlowDirection::kTransmit, t0 + 0.05, 0, 40000, 2222);
    d.Add(pod, peer, FlowDirection::kReceive, t0 + 0.11, 1448, 40000, 2222);
    // Another connection of the same peer turns on its own.
    d.Add(pod, peer, FlowDirection::kReceive, t0 + 0.2, 8, 50000, 2222);
  }
  auto bursts = d.Take(20);
  ASSERT_EQ(bursts.size(), 8u);
  std::map<std::tuple<uint16_t, FlowDirection, double>, uint32_t> turn;
  for (const auto& b : bursts) {
    EXPECT_EQ(b.peer_port, 2222);
    turn[{b.local_port, b.direction, b.start_s}] = b.turn;
  }
  const auto rx = FlowDirection::kReceive, tx = FlowDirection::kTransmit;
  EXPECT_EQ(turn.at({40000, tx, 10}), 0u);
  EXPECT_EQ(turn.at({40000, rx, 10.01}), 1u);
  EXPECT_EQ(turn.at({40000, rx, 10.11}), 1u);
  EXPECT_EQ(turn.at({40000, tx, 11}), 2u);
  EXPECT_EQ(turn.at({40000, rx, 11.01}), 3u);
  EXPECT_EQ(turn.at({40000, rx, 11.11}), 3u);
  EXPECT_EQ(turn.at({50000, rx, 10.2}), 0u);
  EXPECT_EQ(turn.at({50000, rx, 11.2}), 0u);
}

TEST(BurstDetector, GapsSplitBurstsAndAcksAreIgnored) {
  BurstDetector d(0.02);
  LocalPodRef pod{0, *IpAddress::Parse("198.18.0.10")};
  const IpAddress peer = *IpAddress::Parse("198.18.0.20");
  for (int step = 0; step < 3; ++step) {
    const double t0 = 10 + step * 0.5;
    for (int i = 0; i < 50; ++i)
      d.Add(pod, peer, FlowDirection::kReceive, t0 + i * 0.001, 1448);
    d.Add(pod, peer, FlowDirection::kReceive, t0 + 0.1, 0);  // pure ACK
  }
  auto bursts = d.Take(12);
  ASSERT_EQ(bursts.size(), 3u);
  EXPECT_DOUBLE_EQ(bursts[1].start_s, 10.5);
  EXPECT_EQ(bursts[1].payload_bytes, 50u * 1448);
  EXPECT_EQ(bursts[1].packets, 50u);
  EXPECT_NEAR(bursts[1].end_s, 10.549, 1e-9);
  EXPECT_TRUE(d.Take(13).empty());
  EXPECT_EQ(d.open_streams(), 0u);
}

TEST(BurstDetector, BoundedStreams) {
  BurstDetector d(0.02, 4);
  for (int i = 0; i < 10; ++i) {
    LocalPodRef pod{static_cast<uint64_t>(i + 1), {}};
    d.Add(pod, IpAddress{}, FlowDirection::kTransmit, 1 + i * 0.001, 100);
  }
  EXPECT_LE(d.open_streams(), 4u);
  EXPECT_EQ(d.Take(1.0095).size() + d.open_streams(), 10u);
}

TEST(BurstDetector, OffWhenGapIsZero) {
  BurstDetector d(0);
  d.Add({1, {}}, IpAddress{}, FlowDirection::kTransmit, 1, 100);
  EXPECT_EQ(d.open_streams(), 0u);
}

}  // namespace
}  // namespace trainscope
