// Issue 31: a stream saturated from its first step. Without a step size
// seen whole, a period is trusted only where something in the traffic ties
// it to the steps (UnanchoredPeriod, step_rates.h).
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "flows/step_rates.h"

namespace trainscope {
namespace {

PodInfo Pod(const std::string& uid, const std::string& ip, Role role) {
  PodInfo p;
  p.uid = uid;
  p.namespace_name = "training";
  p.name = uid;
  p.pod_ip = ip;
  p.phase = "Running";
  p.role = role;
  return p;
}

// A burst of w0 with w1.
BurstEvent Burst(double start, double end, uint64_t bytes, uint16_t port = 0,
                 uint32_t turn = 0,
                 FlowDirection dir = FlowDirection::kReceive) {
  BurstEvent e;
  e.pod.cgroup_id = 11;
  e.peer = *IpAddress::Parse("198.18.0.11");
  e.direction = dir;
  e.start_s = start;
  e.end_s = end;
  e.payload_bytes = bytes;
  e.packets = 10;
  if (port != 0) {
    e.local_port = port;
    e.peer_port = 2222;
    e.turn = turn;
  }
  return e;
}

class SaturatedStreamTest : public ::testing::Test {
 protected:
  SaturatedStreamTest()
      : pods_{Pod("w0", "198.18.0.10", Role::kWorker),
              Pod("w1", "198.18.0.11", Role::kWorker)},
        resolver_(pods_, {{11, "w0"}}, {"w0"}) {}

  // The rate of w0 after `events`, estimated every 3 s as the agent does.
  std::optional<double> RateAfter(const std::vector<BurstEvent>& events) {
    StepRateTracker tracker;
    tracker.Add(events, resolver_);
    const double end = events.back().end_s;
    for (double t = events.front().start_s + 3; t < end; t += 3)
      tracker.Rates(t);
    return tracker.Rates(end).at("w0").steps_per_second;
  }

  PodList pods_;
  PeerResolver resolver_;
};

// Trains of a stream that never showed a step's exchange unsaturated.
struct Case {
  const char* name;
  // Builds 60 s of bursts; `rng` for the pieces' sizes and silences.
  std::vector<BurstEvent> (*train)(std::mt19937& rng);
  std::optional<double> rate;  // the rate the agent may report, or none
};

// A ring through a node uplink shaped from the start (measured in
// free-allreduce-uplink-shaped: pieces of 8-900 kB each way, silences of
// 20-500 ms where TCP waits on a dropping link, each stream busy 27-50% of
// the time, the pod 64-69%): a comb over them read 0.95-1.0 steps/s
// against the true 0.64.
std::vector<BurstEvent> RingPiecesFromTheStart(std::mt19937& rng) {
  std::uniform_int_distribution<int> bytes(8'000, 400'000);
  std::uniform_real_distribution<double> silence(0.021, 0.12);
  std::vector<BurstEvent> out;
  for (FlowDirection dir : {FlowDirection::kReceive, FlowDirection::kTransmit})
    for (double t = 0; t < 60;) {
      const uint64_t b = static_cast<uint64_t>(bytes(rng));
      const double busy = static_cast<double>(b) / 5e6;  // 40 Mbit/s
      out.push_back(Burst(t, t + busy, b, 0, 0, dir));
      t += busy + silence(rng);
    }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
  return out;
}

// Equal pieces at the rhythm TCP sets on a link saturated with no compute
// between steps (a DDP ring's 350 kB chunks, one per 0.1 s, busy 60% of
// it): one size at a steady rhythm, as whole steps are.
std::vector<BurstEvent> EqualPiecesBackToBack(std::mt19937&) {
  std::vector<BurstEvent> out;
  for (double t = 0; t < 60; t += 0.1)
    out.push_back(Burst(t, t + 0.06, 350'000));
  return out;
}

// A real DDP ring through an uplink shaped from the start
// (realfw-torch-ddp-uplink-from-start): the saturated chunk stream one way
// (350 kB pieces, busy 60%), and gloo's 48-byte messages the other, one
// per chunk, 30-150 ms apart, two or four of them at times within the
// burst gap; their modal size read 16.1 steps/s against 0.67.
std::vector<BurstEvent> SmallMessagesAgainstChunks(std::mt19937& rng) {
  std::uniform_real_distribution<double> every(0.03, 0.15);
  std::uniform_int_distribution<int> joined(0, 9);
  std::vector<BurstEvent> out;
  for (double t = 0; t < 60; t += every(rng)) {
    const int k = joined(rng);
    const uint64_t bytes = k < 7 ? 48 : k < 9 ? 96 : 192;
    out.push_back(Burst(t, t + 0.0005, bytes));
  }
  for (double t = 0; t < 60; t += 0.1)
    out.push_back(Burst(t, t + 0.06, 350'000, 0, 0, FlowDirection::kTransmit));
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.start_s < b.start_s; });
  return out;
}

// Whole steps with compute between them, never seen before: one 2 MB
// exchange per 0.5 s step, busy 10% of it.
std::vector<BurstEvent> WholeStepsWithSilences(std::mt19937&) {
  std::vector<BurstEvent> out;
  for (double t = 0; t < 60; t += 0.5)
    out.push_back(Burst(t, t + 0.05, 2'000'000));
  return out;
}

// Whole steps that take 40% of the step (a link with room to spare and a
// short compute): below the link-bound share, still steps.
std::vector<BurstEvent> WholeStepsBusy40(std::mt19937&) {
  std::vector<BurstEvent> out;
  for (double t = 0; t < 60; t += 0.5)
    out.push_back(Burst(t, t + 0.2, 2'000'000));
  return out;
}

// A PS link saturated from the start (free-saturated-link): every response
// cut into 2-5 pieces with TCP's silences between them, busy about 65% of
// the time, but each pull has its request, so the turns join the pieces
// into one exchange a step.
std::vector<BurstEvent> TurnsOfASaturatedLink(std::mt19937& rng) {
  std::uniform_int_distribution<int> pieces(2, 5);
  std::vector<BurstEvent> out;
  uint32_t turn = 0;
  for (double t = 0; t < 60; t += 0.7) {
    out.push_back(
        Burst(t, t + 0.001, 8, 40000, turn++, FlowDirection::kTransmit));
    const int n = pieces(rng);
    const double each = 0.5 / n;
    for (int k = 0; k < n; ++k) {
      const double from = t + 0.01 + k * each;
      out.push_back(Burst(from, from + each - 0.025, 400'000 / n, 40000, turn));
    }
    ++turn;
  }
  return out;
}

TEST_F(SaturatedStreamTest, NoRateWhereNothingTiesThePeriodToTheSteps) {
  const Case cases[] = {
      {"ring pieces from the start", RingPiecesFromTheStart, std::nullopt},
      {"equal pieces back to back", EqualPiecesBackToBack, std::nullopt},
      {"small messages against chunks", SmallMessagesAgainstChunks,
       std::nullopt},
      {"whole steps with silences", WholeStepsWithSilences, 2.0},
      {"whole steps busy 40%", WholeStepsBusy40, 2.0},
      {"turns of a saturated link", TurnsOfASaturatedLink, 1 / 0.7},
  };
  for (const Case& c : cases) {
    for (unsigned seed = 1; seed <= 3; ++seed) {
      SCOPED_TRACE(std::string(c.name) + " seed " + std::to_string(seed));
      std::mt19937 rng(seed);
      const auto rate = RateAfter(c.train(rng));
      EXPECT_EQ(rate.has_value(), c.rate.has_value()) << (rate ? *rate : 0.0);
      if (rate && c.rate) {
        EXPECT_NEAR(*rate, *c.rate, 0.05 * *c.rate);
      }
    }
  }
}

// A link-bound train teaches the stream no step size: were its pieces
// learned as the step, they would count as steps once the link stays
// saturated.
TEST_F(SaturatedStreamTest, ALinkBoundTrainTeachesNoStepSize) {
  std::mt19937 rng(1);
  StepRateTracker tracker;
  tracker.Add(EqualPiecesBackToBack(rng), resolver_);
  for (double t = 3; t <= 60; t += 3) tracker.Rates(t);
  for (const std::string& line : tracker.Describe(60))
    EXPECT_EQ(line.find("a step moves"), std::string::npos) << line;

  StepRateTracker healthy;
  healthy.Add(WholeStepsWithSilences(rng), resolver_);
  for (double t = 3; t <= 60; t += 3) healthy.Rates(t);
  const auto lines = healthy.Describe(60);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_NE(lines[0].find("a step moves 2000000B"), std::string::npos)
      << lines[0];
}

TEST(BusyShare, TheShareOfTheSpanWithBytesMoving) {
  struct BusyCase {
    const char* name;
    std::vector<BurstPoint> window;
    double share;
  };
  const BusyCase cases[] = {
      {"empty", {}, 0},
      {"one instant", {{1, 100, 1}}, 0},
      {"back to back", {{0, 1, 0.5}, {0.5, 1, 1}}, 1},
      {"a tenth", {{0, 1, 0.1}, {0.9, 1, 1.0}}, 0.2},
      // A peer's connections overlap: each second counts once.
      {"overlapping", {{0, 1, 0.6}, {0.2, 1, 0.5}, {0.9, 1, 1}}, 0.7},
      // An end before its start (unknown end) counts nothing.
      {"unknown ends", {{0, 1, 0}, {1, 1, 0}, {2, 1, 2.5}}, 0.2},
  };
  for (const BusyCase& c : cases)
    EXPECT_NEAR(BusyShare(c.window), c.share, 1e-9) << c.name;
}

TEST(UnanchoredPeriod, OnlyWhatNothingTiesToTheSteps) {
  using Method = PeriodEstimate::Method;
  struct AnchorCase {
    const char* name;
    Method method;
    bool whole;
    bool from_turns;
    double busy;      // the stream's window
    double pod_busy;  // the pod's streams together
    bool unanchored;
  };
  const AnchorCase cases[] = {
      {"cut comb, pod not link-bound", Method::kComb, false, false, 0.1, 0.1,
       false},
      {"cut comb in a link-bound pod", Method::kComb, false, false, 0.3, 0.65,
       true},
      {"cut volume in a link-bound pod", Method::kVolume, false, false, 0.01,
       0.6, true},
      {"counted over a known size", Method::kStepBytes, false, false, 0.9, 0.9,
       false},
      {"whole, silences between", Method::kComb, true, false, 0.1, 0.1, false},
      {"whole, link-bound stream", Method::kComb, true, false, 0.5, 0.3, true},
      {"whole volume, link-bound pod", Method::kVolume, true, false, 0.2, 0.8,
       true},
      {"turns, link-bound", Method::kComb, true, true, 0.9, 0.9, false},
  };

  for (const AnchorCase& c : cases) {
    PeriodEstimate e;
    e.method = c.method;
    e.whole_exchanges = c.whole;
    e.from_turns = c.from_turns;
    EXPECT_EQ(UnanchoredPeriod(e, c.busy, c.pod_busy), c.unanchored) << c.name;
  }
}

}  // namespace
}  // namespace trainscope
