// Table-driven tests of the detectors that compare workers of one job:
// straggler_worker and input_io_bound.
#include "detector_test_main.h"
#include "diagnosis/analysis.h"

namespace trainscope::diagnosis::testing {
namespace {

using L = Finding::Level;
constexpr double MB = 1e6;

// Workers exchanging rates[i] bytes/s with two PS (half each).
WindowBuilder Workers(const std::vector<double>& rates) {
  WindowBuilder b;
  b.Pod("ctr-ps-0", Role::kPs).Pod("ctr-ps-1", Role::kPs);
  for (size_t i = 0; i < rates.size(); ++i) {
    b.Pod("ctr-worker-" + std::to_string(i), Role::kWorker)
        .Peer(Key("ctr-ps-0"), Role::kPs, rates[i] / 4, rates[i] / 4)
        .Peer(Key("ctr-ps-1"), Role::kPs, rates[i] / 4, rates[i] / 4);
  }
  return b;
}

class StragglerTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(StragglerTest, Findings) {
  ExpectFindings(kStragglerWorker, GetParam());
}
INSTANTIATE_TEST_SUITE_P(
    Cases, StragglerTest,
    ::testing::Values(
        DetectorCase{"one_slow",
                     [] {
                       return Workers({MB, MB, MB, 0.3 * MB}).Build();
                     },
                     {{"ctr-worker-3", L::kEnter}}},
        DetectorCase{"at_enter_boundary_is_not_below",
                     [] {
                       return Workers({MB, MB, MB, 0.5 * MB}).Build();
                     },
                     {{"ctr-worker-3", L::kHold}}},
        DetectorCase{"holds",
                     [] {
                       return Workers({MB, MB, MB, 0.6 * MB}).Build();
                     },
                     {{"ctr-worker-3", L::kHold}}},
        DetectorCase{
            "within_spread",
            [] {
              return Workers({MB, 0.9 * MB, 1.1 * MB, 0.8 * MB}).Build();
            },
            {}},
        DetectorCase{"two_workers_not_enough",
                     [] {
                       return Workers({MB, 0.1 * MB}).Build();
                     },
                     {}},
        DetectorCase{"three_workers_enough",
                     [] {
                       return Workers({MB, MB, 0.1 * MB}).Build();
                     },
                     {{"ctr-worker-2", L::kEnter}}},
        DetectorCase{"idle_job",
                     [] {
                       return Workers({10e3, 10e3, 10e3, 0}).Build();
                     },
                     {}},
        // A worker missing a sample keeps its rate over the points it has.
        DetectorCase{"missing_sample_is_no_straggler",
                     [] {
                       auto b = Workers({MB, MB, MB, MB});
                       b.DropPoint(1);
                       return b.Build();
                     },
                     {}},
        // A worker that restarted mid-window (new UID, counters from 0).
        DetectorCase{"restarted_worker_is_no_straggler",
                     [] {
                       Window w = Workers({MB, MB, MB, MB}).Build();
                       auto& restarted = w.pods.at(Key("ctr-worker-3"));
                       restarted.points[2].instance = "new-uid";
                       for (auto& [peer, c] : restarted.points[2].peers) {
                         c = {100, 100};
                       }
                       return w;
                     },
                     {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(StragglerTest, NamesTheVisibleCause) {
  auto b = Workers({MB, MB, MB, 0.3 * MB});
  b.Counter(&PodPoint::cpu_periods, 10)
      .Counter(&PodPoint::cpu_throttled_periods, 5);
  auto found = FindingsOf(kStragglerWorker, b.Build());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].diagnosis.evidence["likely_causes"],
            nlohmann::json::array({"cpu_throttled"}));
  EXPECT_THAT(found[0].diagnosis.summary, ::testing::HasSubstr("throttled"));
  EXPECT_NEAR(found[0].diagnosis.evidence["ratio_to_median"].get<double>(), 0.3,
              1e-6);
}

TEST(StragglerTest, SlowLinkCause) {
  auto b = Workers({MB, MB, MB, 0.3 * MB});
  b.Counter(&PodPoint::network_transmit_bytes, 0.15 * MB);
  b.Meta().egress_limit_bytes_per_second = 0.16 * MB;
  auto found = FindingsOf(kStragglerWorker, b.Build());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].diagnosis.evidence["likely_causes"],
            nlohmann::json::array({"slow_link"}));
}

// ctr-ps-0's link, shaped to 1.1 MB/s, carries 1 MB/s: the workers share
// it, and their shares of a full link are TCP's turns, not their speed.
WindowBuilder BehindAFullPsLink(const std::vector<double>& rates) {
  auto b = Workers(rates);
  b.Pod("ctr-ps-0", Role::kPs)
      .Counter(&PodPoint::network_transmit_bytes, 1.0 * MB);
  b.Meta().egress_limit_bytes_per_second = 1.1 * MB;
  return b;
}

// The job's PS run elsewhere, behind node-a's NIC (2 MB/s) that carries
// `nic_rate` each way.
Window BehindTheNodeNic(double nic_rate) {
  WindowBuilder b;
  b.Node(std::nullopt, 2 * MB).NodeTraffic(nic_rate, nic_rate);
  const std::vector<double> rates = {MB, MB, MB, 0.3 * MB};
  for (size_t i = 0; i < rates.size(); ++i) {
    b.Pod("ctr-worker-" + std::to_string(i), Role::kWorker)
        .Peer(Key("ctr-ps-0"), Role::kPs, rates[i] / 2, rates[i] / 2);
  }
  return b.Build();
}

TEST(StragglerTest, ASmallerShareOfAFullPsLinkIsTheLinks) {
  EXPECT_TRUE(FindingsOf(kStragglerWorker,
                         BehindAFullPsLink({MB, MB, MB, 0.3 * MB}).Build())
                  .empty());
}

// From the workers' side a full NIC may carry a part of the exchanges only,
// or those of some workers only (the cluster view's straggler on a node
// whose NIC other pods fill): the worker is still compared.
TEST(StragglerTest, AFullNodeNicSeenFromTheWorkersProvesNothing) {
  EXPECT_EQ(FindingsOf(kStragglerWorker, BehindTheNodeNic(1.9 * MB)).size(),
            1u);
}

// The cluster view: the job's PS runs on node-a, whose NIC of `nic_speed`
// carries 95% of it, and the workers on node-b, but for the slowest, on
// `slow_worker_node`. The PS exchanges 1.65 MB/s each way with them.
Window BehindThePsNodeNic(const std::string& slow_worker_node,
                          double nic_speed) {
  WindowBuilder b;
  b.Node(std::nullopt, nic_speed)
      .NodeTraffic(0.95 * nic_speed, 0.95 * nic_speed);
  const std::vector<double> rates = {MB, MB, MB, 0.3 * MB};
  b.Pod("ctr-ps-0", Role::kPs);
  for (size_t i = 0; i < rates.size(); ++i) {
    b.Peer(Key("ctr-worker-" + std::to_string(i)), Role::kWorker, rates[i] / 2,
           rates[i] / 2);
  }
  for (size_t i = 0; i < rates.size(); ++i) {
    b.Pod("ctr-worker-" + std::to_string(i), Role::kWorker)
        .Peer(Key("ctr-ps-0"), Role::kPs, rates[i] / 2, rates[i] / 2);
    b.Meta().node = i + 1 == rates.size() ? slow_worker_node : "node-b";
  }
  return b.Build();
}

// node-a's NIC is full of the job's exchanges: its workers take turns there.
TEST(StragglerTest, ASmallerShareOfTheFullPsNodeNicIsTheLinks) {
  EXPECT_TRUE(FindingsOf(kStragglerWorker, BehindThePsNodeNic("node-b", 2 * MB))
                  .empty());
}

// Beside its PS the worker's exchange does not cross the full NIC.
TEST(StragglerTest, AWorkerBesideItsPsIsStillJudged) {
  const auto found =
      FindingsOf(kStragglerWorker, BehindThePsNodeNic("node-a", 2 * MB));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].diagnosis.pod, "ctr-worker-3");
}

// Other tenants fill node-a's NIC (the job's 1.65 of 19 MB/s): it slows
// every worker crossing it alike, and the straggler keeps its own deficit.
TEST(StragglerTest, ANicFullOfOtherTenantsLeavesTheStraggler) {
  const auto found =
      FindingsOf(kStragglerWorker, BehindThePsNodeNic("node-b", 20 * MB));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].diagnosis.pod, "ctr-worker-3");
}

TEST(StragglerTest, OnAFullSharedLinkACauseOfItsOwnStillCounts) {
  auto b = BehindAFullPsLink({MB, MB, MB, 0.3 * MB});
  b.Pod("ctr-worker-3", Role::kWorker)
      .Peer(Key("ctr-ps-0"), Role::kPs, 0.3 * MB / 4, 0.3 * MB / 4)
      .Peer(Key("ctr-ps-1"), Role::kPs, 0.3 * MB / 4, 0.3 * MB / 4)
      .Counter(&PodPoint::cpu_periods, 10)
      .Counter(&PodPoint::cpu_throttled_periods, 5);
  auto found = FindingsOf(kStragglerWorker, b.Build());
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].diagnosis.pod, "ctr-worker-3");
  EXPECT_EQ(found[0].diagnosis.evidence["likely_causes"],
            nlohmann::json::array({"cpu_throttled"}));
}

// Workers at 1 MB/s; the last one at `rate` with IO stall ratio `psi`.
Window Io(double rate, std::optional<double> psi) {
  auto b = Workers({MB, MB, MB, rate});
  if (psi) b.Counter(&PodPoint::io_pressure_some_seconds, *psi);
  b.Counter(&PodPoint::io_read_bytes, 20 * MB);
  return b.Build();
}

class InputIoTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(InputIoTest, Findings) { ExpectFindings(kInputIoBound, GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Cases, InputIoTest,
    ::testing::Values(DetectorCase{"stalls_and_exchange_drops",
                                   [] { return Io(0.3 * MB, 0.4); },
                                   {{"ctr-worker-3", L::kEnter}}},
                      DetectorCase{"at_psi_enter",
                                   [] { return Io(0.3 * MB, 0.2); },
                                   {{"ctr-worker-3", L::kEnter}}},
                      DetectorCase{"psi_between_thresholds",
                                   [] { return Io(0.3 * MB, 0.15); },
                                   {{"ctr-worker-3", L::kHold}}},
                      DetectorCase{"stalls_but_exchange_normal",
                                   [] { return Io(MB, 0.4); },
                                   {}},
                      DetectorCase{"slow_without_io_stall",
                                   [] { return Io(0.3 * MB, 0.01); },
                                   {}},
                      DetectorCase{"no_psi_on_this_node",
                                   [] { return Io(0.3 * MB, std::nullopt); },
                                   {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// All workers stall together: no peer is faster, but each fell below its own
// rate over the longer history.
TEST(InputIoTest, DropAgainstOwnHistory) {
  WindowBuilder b(12);
  b.Pod("ctr-ps-0", Role::kPs);
  for (int i = 0; i < 3; ++i) {
    b.Pod("ctr-worker-" + std::to_string(i), Role::kWorker)
        .Counter(&PodPoint::io_pressure_some_seconds, 0.5)
        .Peer(Key("ctr-ps-0"), Role::kPs, 0.5 * MB, 0.5 * MB);
  }
  Window history = b.Build();
  // The last 3 instants: exchange falls to 1/5.
  for (auto& [key, t] : history.pods) {
    if (t.meta.role != Role::kWorker) continue;
    for (size_t i = 9; i < t.points.size(); ++i) {
      auto& c = t.points[i].peers[Key("ctr-ps-0")];
      const double at8 = 1e6 + 0.5 * MB * 40;
      c.receive_bytes = at8 + 0.1 * MB * (t.points[i].t - 40);
      c.transmit_bytes = at8 + 1e6 + 0.1 * MB * (t.points[i].t - 40);
    }
  }
  WindowStats recent = ComputeStats(Tail(history, 3));
  WindowStats baseline = ComputeStats(history);
  auto jobs = ComputeJobTraffic(recent);
  std::vector<Finding> out;
  DetectInputIoBound({recent, baseline, jobs, jobs}, InputIoSettings{}, out);
  EXPECT_EQ(out.size(), 3u);
}

// Workers 0-2 exchange 1 MB/s with one PS every 5 s interval; worker 3 runs at
// `slow_rate` during intervals [slow_from, slow_to) and at 1 MB/s otherwise,
// replayed the way the agent evaluates live.
Window Timeline(double slow_rate, int slow_from, int slow_to) {
  Window w;
  w.peer_roles[Key("ctr-ps-0")] = Role::kPs;
  auto& ps = w.pods[Key("ctr-ps-0")];
  ps.meta = {"training", "ctr-ps-0", "ctr", Role::kPs};
  for (int wk = 0; wk < 4; ++wk) {
    const std::string name = "ctr-worker-" + std::to_string(wk);
    auto& t = w.pods[Key(name)];
    t.meta = {"training", name, "ctr", Role::kWorker};
    double bytes = 0;
    for (int i = 0; i < 20; ++i) {
      PodPoint p;
      p.t = 5.0 * i;
      p.instance = name + "-uid";
      p.peers[Key("ctr-ps-0")] = {bytes / 2, bytes / 2};
      t.points.push_back(p);
      const bool slow = wk == 3 && i >= slow_from && i < slow_to;
      bytes += (slow ? slow_rate : MB) * 5;
    }
  }
  return w;
}

bool StragglerActive(const Window& w) {
  for (const auto& d : Replay(w, {}).active) {
    if (d.kind == kStragglerWorker && d.pod == "ctr-worker-3") return true;
  }
  return false;
}

// Flows sharing a full PS link take turns: a healthy worker can sit below half
// of its peers for three intervals (here the last three of the replay, so a
// diagnosis would still be active at its end). That is no straggler.
TEST(StragglerReplayTest, ShortDipIsNotAStraggler) {
  EXPECT_FALSE(StragglerActive(Timeline(0.2 * MB, 16, 19)));
}

TEST(StragglerReplayTest, SustainedSlownessIs) {
  EXPECT_TRUE(StragglerActive(Timeline(0.2 * MB, 5, 20)));
}

}  // namespace
}  // namespace trainscope::diagnosis::testing
