#include "detector_test_main.h"

namespace trainscope::diagnosis::testing {
namespace {

using L = Finding::Level;
constexpr double MB = 1e6;

Window Job(std::vector<double> shares, double total_per_worker = 4 * MB,
           int workers = 3) {
  WindowBuilder b;
  for (auto& s : shares) s *= total_per_worker;
  PsJob(b, shares, workers);
  return b.Build();
}

class HotPsTest : public ::testing::TestWithParam<DetectorCase> {};

TEST_P(HotPsTest, Findings) { ExpectFindings(kHotParameterServer, GetParam()); }

INSTANTIATE_TEST_SUITE_P(
    Cases, HotPsTest,
    ::testing::Values(
        DetectorCase{"two_ps_80_20",
                     [] {
                       return Job({0.8, 0.2});
                     },
                     {{"ctr-ps-0", L::kEnter}}},
        // 2 PS enter at 0.75 (3:1), exit below 0.65.
        DetectorCase{"two_ps_at_enter_boundary",
                     [] {
                       return Job({0.75, 0.25});
                     },
                     {{"ctr-ps-0", L::kEnter}}},
        DetectorCase{"two_ps_70_30_holds",
                     [] {
                       return Job({0.3, 0.7});
                     },
                     {{"ctr-ps-1", L::kHold}}},
        DetectorCase{"two_ps_60_40",
                     [] {
                       return Job({0.6, 0.4});
                     },
                     {}},
        DetectorCase{"three_ps_80_10_10",
                     [] {
                       return Job({0.1, 0.8, 0.1});
                     },
                     {{"ctr-ps-1", L::kEnter}}},
        DetectorCase{"four_ps_balanced",
                     [] {
                       return Job({0.25, 0.25, 0.25, 0.25});
                     },
                     {}},
        DetectorCase{"four_ps_at_half",
                     [] {
                       return Job({0.5, 0.17, 0.17, 0.16});
                     },
                     {{"ctr-ps-0", L::kEnter}}},
        DetectorCase{"four_ps_just_below_exit",
                     [] {
                       return Job({0.39, 0.21, 0.2, 0.2});
                     },
                     {}},
        // Skewed but tiny: 3 workers x 0.8 x 10 kB/s is below the floor.
        DetectorCase{"below_traffic_floor",
                     [] {
                       return Job({0.8, 0.2}, 10e3);
                     },
                     {}},
        DetectorCase{"single_ps", [] { return Job({1.0}); }, {}},
        // The field story: 5 PS, one busy.
        DetectorCase{"five_ps_one_busy",
                     [] {
                       return Job({0.8, 0.05, 0.05, 0.05, 0.05});
                     },
                     {{"ctr-ps-0", L::kEnter}}},
        DetectorCase{"six_ps_jittered_balance",
                     [] {
                       return Job({0.17, 0.16, 0.18, 0.165, 0.17, 0.155});
                     },
                     {}},
        DetectorCase{"twenty_ps_one_at_quarter",
                     [] {
                       std::vector<double> s(20, 0.75 / 19);
                       s[7] = 0.25;
                       return Job(s);
                     },
                     {{"ctr-ps-7", L::kEnter}}},
        // One worker missed a sample; the others still show the skew.
        DetectorCase{"missing_sample",
                     [] {
                       WindowBuilder b;
                       PsJob(b, {3.2 * MB, 0.8 * MB}, 3);
                       b.Pod("ctr-worker-3", Role::kWorker)
                           .Peer(Key("ctr-ps-0"), Role::kPs, 1.6 * MB, 1.6 * MB)
                           .Peer(Key("ctr-ps-1"), Role::kPs, 0.4 * MB, 0.4 * MB)
                           .DropPoint(1);
                       return b.Build();
                     },
                     {{"ctr-ps-0", L::kEnter}}},
        // The hot PS restarted mid-window: the workers' counters towards it
        // reset; the reset interval is skipped, the share stays right.
        DetectorCase{"ps_restart_resets_peer_counters",
                     [] {
                       WindowBuilder b(4);
                       PsJob(b, {3.2 * MB, 0.8 * MB}, 3);
                       Window win = b.Build();
                       for (auto& [key, timeline] : win.pods) {
                         if (timeline.meta.role != Role::kWorker) continue;
                         auto& c = timeline.points[2].peers[Key("ctr-ps-0")];
                         c.receive_bytes = 10;
                         c.transmit_bytes = 10;
                         timeline.points[3].peers[Key("ctr-ps-0")] = {
                             10 + 1.6 * MB * 5, 10 + 1.6 * MB * 5};
                       }
                       return win;
                     },
                     {{"ctr-ps-0", L::kEnter}}},
        // Remote PS (not in the pod list, known only as peers with role ps).
        DetectorCase{
            "remote_ps_seen_from_workers",
            [] {
              WindowBuilder b;
              for (int w = 0; w < 2; ++w) {
                b.Pod("ctr-worker-" + std::to_string(w), Role::kWorker)
                    .Peer(Key("ctr-ps-0"), Role::kPs, 0.2 * MB, 0.2 * MB)
                    .Peer(Key("ctr-ps-1"), Role::kPs, 2 * MB, 2 * MB)
                    .Peer(Key("ctr-ps-2"), Role::kPs, 0.2 * MB, 0.2 * MB);
              }
              return b.Build();
            },
            {{"ctr-ps-1", L::kEnter}}},
        // CPU dominance without traffic data.
        DetectorCase{
            "cpu_dominance_others_idle",
            [] {
              WindowBuilder b;
              b.Pod("ctr-ps-0", Role::kPs)
                  .Counter(&PodPoint::cpu_usage_seconds, 0.9);
              b.Pod("ctr-ps-1", Role::kPs)
                  .Counter(&PodPoint::cpu_usage_seconds, 0.02);
              b.Pod("ctr-ps-2", Role::kPs)
                  .Counter(&PodPoint::cpu_usage_seconds, 0.03);
              for (int i = 0; i < 3; ++i) {
                b.Pod("ctr-worker-" + std::to_string(i), Role::kWorker);
                for (int p = 0; p < 3; ++p) {
                  b.Peer(Key("ctr-ps-" + std::to_string(p)), Role::kPs, 0, 0);
                }
              }
              return b.Build();
            },
            {{"ctr-ps-0", L::kEnter}}},
        DetectorCase{"cpu_busy_everywhere_is_not_hot",
                     [] {
                       WindowBuilder b;
                       b.Pod("ctr-ps-0", Role::kPs)
                           .Counter(&PodPoint::cpu_usage_seconds, 0.9)
                           .Peer(Key("ctr-worker-0"), Role::kWorker, 1, 1);
                       b.Pod("ctr-ps-1", Role::kPs)
                           .Counter(&PodPoint::cpu_usage_seconds, 0.5)
                           .Peer(Key("ctr-worker-0"), Role::kWorker, 1, 1);
                       return b.Build();
                     },
                     {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(HotPsEvidenceTest, NamesEverySharesAndTheFix) {
  auto found = FindingsOf(kHotParameterServer,
                          Job({0.05, 0.8, 0.05, 0.05, 0.05}, 4 * MB, 4));
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  EXPECT_EQ(d.pod, "ctr-ps-1");
  EXPECT_EQ(d.training_job, "ctr");
  // No exchange times, no CPU limit: the skew alone bounds the cost
  // (1 - 0.2 / 0.8), and a bound is at most a warning.
  EXPECT_EQ(d.evidence["cost_model"], "skew_upper_bound");
  EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), 0.75, 1e-3);
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_EQ(d.evidence["ps"].size(), 5u);
  EXPECT_NEAR(d.evidence["ps"]["ctr-ps-1"]["share"].get<double>(), 0.8, 1e-3);
  // 4 workers x 0.8 x 4 MB/s.
  EXPECT_NEAR(d.evidence["ps"]["ctr-ps-1"]["bytes_per_second"].get<double>(),
              12.8e6, 1e4);
  EXPECT_EQ(d.evidence["rule"], "robust_z");
  std::string all;
  for (const auto& r : d.recommendations) all += r + "\n";
  EXPECT_THAT(all,
              ::testing::HasSubstr("fixed_size_partitioner(num_shards=5)"));
  EXPECT_THAT(all, ::testing::HasSubstr("min_max_variable_partitioner"));
  EXPECT_THAT(all, ::testing::HasSubstr("MinSizePartitioner"));
  EXPECT_THAT(all, ::testing::HasSubstr("max_shards=5"));
  EXPECT_THAT(all, ::testing::HasSubstr("GreedyLoadBalancingStrategy"));
  EXPECT_THAT(all, ::testing::HasSubstr("will not help"));
  EXPECT_THAT(d.summary, ::testing::HasSubstr("80%"));
}

}  // namespace
}  // namespace trainscope::diagnosis::testing
