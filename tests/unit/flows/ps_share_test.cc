#include "flows/ps_share.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

PodInfo Pod(const std::string& name, Role role, const std::string& job = "ctr",
            const std::string& ns = "training") {
  PodInfo p;
  p.uid = "u-" + ns + "-" + name;
  p.name = name;
  p.namespace_name = ns;
  p.training_job = job;
  p.role = role;
  return p;
}

// (pod, peer, rx, tx) as cumulative counters.
struct Traffic {
  std::string pod, peer;
  uint64_t rx, tx;
};

std::shared_ptr<const Snapshot> Snap(std::shared_ptr<const PodList> pods,
                                     const std::vector<Traffic>& traffic) {
  auto s = std::make_shared<Snapshot>();
  s->pods = pods;
  for (const auto& t : traffic) {
    PeerTrafficSample p;
    p.pod_uid = "u-training-" + t.pod;
    if (!t.peer.empty()) p.peer_uid = "u-training-" + t.peer;
    p.receive_bytes = t.rx;
    p.transmit_bytes = t.tx;
    s->peer_traffic.push_back(p);
  }
  return s;
}

std::shared_ptr<const PodList> Pods(std::vector<PodInfo> pods) {
  return std::make_shared<const PodList>(std::move(pods));
}

TEST(PsTrafficShare, TableOfWindows) {
  auto three_ps = Pods({Pod("w0", Role::kWorker), Pod("w1", Role::kWorker),
                        Pod("ps0", Role::kPs), Pod("ps1", Role::kPs),
                        Pod("ps2", Role::kPs)});
  auto one_ps = Pods({Pod("w0", Role::kWorker), Pod("ps0", Role::kPs)});
  struct Case {
    const char* name;
    std::shared_ptr<const PodList> pods;
    std::vector<Traffic> first, last;
    std::map<std::string, double> share;  // empty: undefined
    std::optional<double> skew;
  };
  const std::vector<Case> cases = {
      {"no bytes at all", three_ps, {}, {}, {}, std::nullopt},
      {"no bytes in the window",
       three_ps,
       {{"w0", "ps0", 500, 500}},
       {{"w0", "ps0", 500, 500}},
       {},
       std::nullopt},
      {"single PS", one_ps, {}, {{"w0", "ps0", 10, 20}}, {{"ps0", 1.0}}, 1.0},
      {"tie",
       three_ps,
       {},
       {{"w0", "ps0", 50, 50}, {"w0", "ps1", 50, 50}, {"w1", "ps2", 0, 100}},
       {{"ps0", 1 / 3.0}, {"ps1", 1 / 3.0}, {"ps2", 1 / 3.0}},
       1.0},
      {"hot PS; idle PS still listed",
       three_ps,
       {},
       {{"w0", "ps0", 700, 100}, {"w1", "ps0", 0, 100}, {"w0", "ps1", 0, 100}},
       {{"ps0", 0.9}, {"ps1", 0.1}, {"ps2", 0.0}},
       2.7},
      {"window counts the increase only",
       three_ps,
       {{"w0", "ps0", 1000, 1000}, {"w0", "ps1", 0, 0}},
       {{"w0", "ps0", 1100, 1000}, {"w0", "ps1", 100, 0}},
       {{"ps0", 0.5}, {"ps1", 0.5}, {"ps2", 0.0}},
       1.5},
      {"both sides on this node count once",
       one_ps,
       {},
       {{"w0", "ps0", 60, 40}, {"ps0", "w0", 40, 60}},
       {{"ps0", 1.0}},
       1.0},
      {"PS-side view only (worker elsewhere)",
       three_ps,
       {},
       {{"ps0", "w0", 30, 30}, {"ps1", "w1", 20, 40}},
       {{"ps0", 0.5}, {"ps1", 0.5}, {"ps2", 0.0}},
       1.5},
      {"unknown peers and PS-PS traffic ignored",
       three_ps,
       {},
       {{"w0", "", 999, 999}, {"ps0", "ps1", 999, 999}, {"w0", "ps2", 1, 1}},
       {{"ps0", 0.0}, {"ps1", 0.0}, {"ps2", 1.0}},
       3.0},
      {"counter reset counts from the reset",
       three_ps,
       {{"w0", "ps0", 5000, 5000}},
       {{"w0", "ps0", 50, 50}, {"w0", "ps1", 100, 0}},
       {{"ps0", 0.5}, {"ps1", 0.5}, {"ps2", 0.0}},
       1.5},
  };
  for (const auto& c : cases) {
    auto got =
        ComputePsTrafficShares({Snap(c.pods, c.first), Snap(c.pods, c.last)});
    ASSERT_EQ(got.size(), 1u) << c.name;
    EXPECT_EQ(got[0].training_job, "ctr");
    EXPECT_EQ(got[0].namespace_name, "training");
    ASSERT_EQ(got[0].share.size(), c.share.size()) << c.name;
    for (const auto& [pod, want] : c.share) {
      EXPECT_NEAR(got[0].share.at(pod), want, 1e-9) << c.name << " " << pod;
    }
    ASSERT_EQ(got[0].skew.has_value(), c.skew.has_value()) << c.name;
    if (c.skew) {
      EXPECT_NEAR(*got[0].skew, *c.skew, 1e-9) << c.name;
    }
  }
}

TEST(PsTrafficShare, JobsAreSeparateAndNeedTwoSnapshots) {
  auto pods = Pods({Pod("w0", Role::kWorker, "a"), Pod("ps0", Role::kPs, "a"),
                    Pod("w1", Role::kChief, "b"), Pod("ps1", Role::kPs, "b"),
                    Pod("ev", Role::kEvaluator, "b")});
  auto last = Snap(pods, {{"w0", "ps0", 10, 0},
                          {"w1", "ps1", 10, 0},
                          {"ev", "ps1", 1000, 0},
                          // a worker of job a talking to job b's PS
                          {"w0", "ps1", 1000, 0}});
  EXPECT_TRUE(ComputePsTrafficShares({last}).empty());
  auto got = ComputePsTrafficShares({Snap(pods, {}), last});
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].training_job, "a");
  EXPECT_EQ(got[0].bytes.at("ps0"), 10);
  EXPECT_EQ(got[1].training_job, "b");
  EXPECT_EQ(got[1].bytes.at("ps1"), 10);  // chief counts, evaluator not
}

}  // namespace
}  // namespace trainscope
