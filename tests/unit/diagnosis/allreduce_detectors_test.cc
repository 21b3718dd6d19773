// Table-driven tests of the detectors that compare ranks by cause:
// allreduce_straggler, allreduce_slow_link, straggler_worker in synchronous
// PS jobs, and the framework-aware hot_parameter_server advice.
#include "detector_test_main.h"

namespace trainscope::diagnosis::testing {
namespace {

using L = Finding::Level;
constexpr double MB = 1e6;

std::string Rank(int i) { return "ddp-worker-" + std::to_string(i); }

// An allreduce ring of n ranks (no PS): rank i exchanges `rate` bytes/s with
// each ring neighbour. Every rank has CFS
// periods, PSI and memory at healthy levels unless a case changes them:
// 0.8 of 2 cores, 2% of periods throttled, 1% CPU and IO stalls, a quarter
// of the memory limit.
WindowBuilder Ring(int n, double rate = 2 * MB) {
  WindowBuilder b;
  for (int i = 0; i < n; ++i) {
    b.Pod(Rank(i), i == 0 ? Role::kMaster : Role::kWorker, "ddp")
        .Counter(&PodPoint::cpu_periods, 10)
        .Counter(&PodPoint::cpu_throttled_periods, 0.2)
        .Counter(&PodPoint::cpu_usage_seconds, 0.8)
        .Gauge(&PodPoint::cpu_limit_cores, 2.0)
        .Counter(&PodPoint::cpu_pressure_some_seconds, 0.01)
        .Counter(&PodPoint::io_pressure_some_seconds, 0.01)
        .Counter(&PodPoint::memory_pressure_some_seconds, 0.0)
        .Gauge(&PodPoint::memory_working_set_bytes, 1e9)
        .Gauge(&PodPoint::memory_limit_bytes, 4e9)
        .Counter(&PodPoint::network_transmit_bytes, rate)
        .Counter(&PodPoint::network_receive_bytes, rate);
    b.Meta().job_kind = JobKind::kPyTorchJob;
    b.Meta().framework = Framework::kPyTorch;
    const int next = (i + 1) % n, prev = (i + n - 1) % n;
    if (next != i) b.Peer(Key(Rank(next)), Role::kWorker, 0, rate);
    if (prev != i && prev != next)
      b.Peer(Key(Rank(prev)), Role::kWorker, rate, 0);
  }
  return b;
}

// Sets a counter of one rank in a built window.
void SetCounter(Window& w, const std::string& pod,
                std::optional<double> PodPoint::*field, double rate) {
  for (auto& p : w.pods.at(Key(pod)).points) p.*field = 1000 + rate * p.t;
}
void SetGauge(Window& w, const std::string& pod,
              std::optional<double> PodPoint::*field, double value) {
  for (auto& p : w.pods.at(Key(pod)).points) p.*field = value;
}

Window RingWith(int n, const std::function<void(Window&)>& change) {
  Window w = Ring(n).Build();
  change(w);
  return w;
}

class AllreduceStragglerTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(AllreduceStragglerTest, Findings) {
  ExpectFindings(kAllreduceStraggler, GetParam());
}
INSTANTIATE_TEST_SUITE_P(
    Cases, AllreduceStragglerTest,
    ::testing::Values(
        DetectorCase{"balanced_job", [] { return Ring(4).Build(); }, {}},
        DetectorCase{"throttled_rank",
                     [] {
                       return RingWith(3, [](Window& w) {
                         SetCounter(w, Rank(2),
                                    &PodPoint::cpu_throttled_periods, 6);
                       });
                     },
                     {{Rank(2), L::kEnter}}},
        DetectorCase{"throttled_between_exit_and_enter_holds",
                     [] {
                       return RingWith(3, [](Window& w) {
                         SetCounter(w, Rank(2),
                                    &PodPoint::cpu_throttled_periods, 2);
                       });
                     },
                     {{Rank(2), L::kHold}}},
        DetectorCase{"every_rank_throttled_alike_is_no_straggler",
                     [] {
                       return RingWith(4, [](Window& w) {
                         for (int i = 0; i < 4; ++i) {
                           SetCounter(w, Rank(i),
                                      &PodPoint::cpu_throttled_periods, 5);
                         }
                       });
                     },
                     {}},
        DetectorCase{"cpu_starved_by_psi",
                     [] {
                       return RingWith(4, [](Window& w) {
                         SetCounter(w, Rank(1),
                                    &PodPoint::cpu_pressure_some_seconds, 0.4);
                       });
                     },
                     {{Rank(1), L::kEnter}}},
        DetectorCase{"cpu_at_its_lower_limit",
                     [] {
                       return RingWith(3, [](Window& w) {
                         SetGauge(w, Rank(1), &PodPoint::cpu_limit_cores, 0.85);
                       });
                     },
                     {{Rank(1), L::kEnter}}},
        DetectorCase{"io_stall",
                     [] {
                       return RingWith(4, [](Window& w) {
                         SetCounter(w, Rank(3),
                                    &PodPoint::io_pressure_some_seconds, 0.5);
                       });
                     },
                     {{Rank(3), L::kEnter}}},
        DetectorCase{"memory_near_limit",
                     [] {
                       return RingWith(3, [](Window& w) {
                         SetGauge(w, Rank(0),
                                  &PodPoint::memory_working_set_bytes, 3.9e9);
                       });
                     },
                     {{Rank(0), L::kEnter}}},
        DetectorCase{"two_ranks_ratio_rule",
                     [] {
                       return RingWith(2, [](Window& w) {
                         SetCounter(w, Rank(1),
                                    &PodPoint::cpu_throttled_periods, 6);
                       });
                     },
                     {{Rank(1), L::kEnter}}},
        DetectorCase{"one_rank_has_no_peers",
                     [] {
                       return RingWith(1, [](Window& w) {
                         SetCounter(w, Rank(0),
                                    &PodPoint::cpu_throttled_periods, 6);
                       });
                     },
                     {}},
        // From 5 ranks the robust z-score must agree: a rank at 0.3 among
        // peers spread 0.05-0.25 passes the ratio rule, not the z-score.
        DetectorCase{
            "six_ranks_within_spread",
            [] {
              return RingWith(6, [](Window& w) {
                const double stall[] = {0.3, 0.05, 0.1, 0.15, 0.2, 0.25};
                for (int i = 0; i < 6; ++i) {
                  SetCounter(w, Rank(i), &PodPoint::io_pressure_some_seconds,
                             stall[i]);
                }
              });
            },
            {}},
        DetectorCase{"six_ranks_one_stands_out",
                     [] {
                       return RingWith(6, [](Window& w) {
                         SetCounter(w, Rank(4),
                                    &PodPoint::io_pressure_some_seconds, 0.5);
                       });
                     },
                     {{Rank(4), L::kEnter}}},
        // The chief coordinates: never a rank, never a straggler.
        DetectorCase{"chief_is_never_a_straggler",
                     [] {
                       auto b = Ring(3);
                       b.Pod("ddp-chief-0", Role::kChief, "ddp")
                           .Counter(&PodPoint::cpu_periods, 10)
                           .Counter(&PodPoint::cpu_throttled_periods, 8);
                       return b.Build();
                     },
                     {}},
        // Workers that do not talk to each other, of a job of unknown kind:
        // their PS may be remote and unnamed, so this is no allreduce job.
        DetectorCase{"no_rank_traffic_and_unknown_kind",
                     [] {
                       Window w = Ring(3).Build();
                       for (auto& [_, timeline] : w.pods) {
                         timeline.meta.job_kind = JobKind::kUnknown;
                         timeline.meta.framework = Framework::kUnknown;
                         for (auto& p : timeline.points) p.peers.clear();
                       }
                       w.peer_roles.clear();
                       SetCounter(w, Rank(2), &PodPoint::cpu_throttled_periods,
                                  6);
                       return w;
                     },
                     {}},
        DetectorCase{"pytorch_job_without_flow_data",
                     [] {
                       Window w = Ring(3).Build();
                       for (auto& [_, timeline] : w.pods) {
                         for (auto& p : timeline.points) p.peers.clear();
                       }
                       SetCounter(w, Rank(2), &PodPoint::cpu_throttled_periods,
                                  6);
                       return w;
                     },
                     {{Rank(2), L::kEnter}}},
        // A PS job is never an allreduce job.
        DetectorCase{"ps_job_is_not_allreduce",
                     [] {
                       auto b = Ring(3);
                       b.Pod("ddp-ps-0", Role::kPs, "ddp");
                       Window w = b.Build();
                       SetCounter(w, Rank(2), &PodPoint::cpu_throttled_periods,
                                  6);
                       return w;
                     },
                     {}},
        // A rank held back by its link is allreduce_slow_link instead.
        DetectorCase{
            "saturated_link_is_the_slow_link_kind",
            [] {
              Window w = Ring(3).Build();
              SetCounter(w, Rank(2), &PodPoint::cpu_throttled_periods, 6);
              w.pods.at(Key(Rank(2))).meta.egress_limit_bytes_per_second =
                  2.1 * MB;
              return w;
            },
            {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(AllreduceStragglerTest, EvidenceCostAndPyTorchAdvice) {
  Window w = Ring(4).Build();
  SetCounter(w, Rank(1), &PodPoint::cpu_pressure_some_seconds, 0.41);
  auto found = FindingsOf(kAllreduceStraggler, w);
  ASSERT_EQ(found.size(), 1u);
  const auto& d = found[0].diagnosis;
  EXPECT_EQ(d.training_job, "ddp");
  EXPECT_EQ(d.evidence["cause"], "cpu_starved");
  EXPECT_EQ(d.evidence["ranks"], 4);
  EXPECT_EQ(d.evidence["job_kind"], "PyTorchJob");
  const auto& stall = d.evidence["causes"]["cpu_stall_ratio"];
  EXPECT_NEAR(stall["value"].get<double>(), 0.41, 1e-3);
  EXPECT_NEAR(stall["peer_median"].get<double>(), 0.01, 1e-3);
  EXPECT_EQ(stall["rule"], "ratio");
  // Excess stall over the peers' median is the time every rank waits.
  EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), 0.4, 1e-3);
  EXPECT_NEAR(d.evidence["expected_speedup"].get<double>(), 1 / 0.6, 1e-3);
  std::string all;
  for (const auto& r : d.recommendations) all += r + "\n";
  EXPECT_THAT(all, ::testing::HasSubstr("NCCL_SOCKET_IFNAME"));
  EXPECT_THAT(all, ::testing::HasSubstr("torchrun"));
  EXPECT_THAT(all, ::testing::Not(::testing::HasSubstr("tf.data")));
}

TEST(AllreduceStragglerTest, ThrottlingCostIsOnlyABound) {
  // Throttled periods say how often, not how long, the rank stalls: their
  // share beyond the peers' bounds the cost, and a bound is never critical.
  Window w = Ring(3).Build();
  SetCounter(w, Rank(2), &PodPoint::cpu_throttled_periods, 6);
  auto found = FindingsOf(kAllreduceStraggler, w);
  ASSERT_EQ(found.size(), 1u);
  const auto& ev = found[0].diagnosis.evidence;
  EXPECT_EQ(ev["cost_model"], "throttled_ratio_beyond_peers_upper_bound");
  EXPECT_GT(ev["cost_fraction"].get<double>(), 0.5);
  EXPECT_EQ(found[0].diagnosis.severity, Severity::kWarning);
}

TEST(AllreduceStragglerTest, AStallStandingOutBoundsTheThrottlingCost) {
  // Real PyTorch DDP with one rank's CPU limit cut to 0.05 cores: throttled
  // in 93% of its periods, but its CPU stall (PSI, time) is 0.35 against
  // its peers' 0.02. The job lost 14% of its steps; the throttled share
  // read a 15x speed-up, the stall 1.5x.
  Window w = Ring(3).Build();
  SetCounter(w, Rank(2), &PodPoint::cpu_throttled_periods, 6);
  SetCounter(w, Rank(2), &PodPoint::cpu_pressure_some_seconds, 0.35);
  auto found = FindingsOf(kAllreduceStraggler, w);
  ASSERT_EQ(found.size(), 1u);
  const auto& ev = found[0].diagnosis.evidence;
  EXPECT_EQ(ev["cause"], "cpu_throttled");
  EXPECT_EQ(ev["cost_model"], "stall_beyond_peers_upper_bound");
  EXPECT_NEAR(ev["cost_fraction"].get<double>(), 0.34, 1e-3);
}

// One rank's link shaped to `limit` bytes/s egress; every rank sends 2 MB/s.
Window ShapedRank(int n, int shaped, double limit, double peer_limit = 0) {
  Window w = Ring(n).Build();
  for (int i = 0; i < n; ++i) {
    auto& meta = w.pods.at(Key(Rank(i))).meta;
    if (i == shaped) {
      meta.egress_limit_bytes_per_second = limit;
    } else if (peer_limit > 0) {
      meta.egress_limit_bytes_per_second = peer_limit;
    }
  }
  return w;
}

class AllreduceSlowLinkTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(AllreduceSlowLinkTest, Findings) {
  ExpectFindings(kAllreduceSlowLink, GetParam());
}
INSTANTIATE_TEST_SUITE_P(
    Cases, AllreduceSlowLinkTest,
    ::testing::Values(
        DetectorCase{"no_capacity_known", [] { return Ring(4).Build(); }, {}},
        DetectorCase{"one_shaped_rank",
                     [] { return ShapedRank(4, 2, 2.1 * MB); },
                     {{Rank(2), L::kEnter}}},
        DetectorCase{"between_exit_and_enter_holds",
                     [] { return ShapedRank(4, 1, 2.7 * MB); },
                     {{Rank(1), L::kHold}}},
        DetectorCase{"below_exit", [] { return ShapedRank(4, 1, 4 * MB); }, {}},
        DetectorCase{"every_link_full_is_network_saturated_instead",
                     [] { return ShapedRank(4, 1, 2.1 * MB, 2.1 * MB); },
                     {}},
        DetectorCase{"peers_with_fast_links",
                     [] { return ShapedRank(3, 0, 2.1 * MB, 100 * MB); },
                     {{Rank(0), L::kEnter}}},
        DetectorCase{
            "alone_in_the_view", [] { return ShapedRank(1, 0, 2.1 * MB); }, {}},
        DetectorCase{"ps_job",
                     [] {
                       Window w = ShapedRank(3, 1, 2.1 * MB);
                       w.peer_roles[Key("ddp-ps-0")] = Role::kPs;
                       for (auto& p : w.pods.at(Key(Rank(0))).points) {
                         p.peers[Key("ddp-ps-0")] = {1e6 + p.t, 1e6 + p.t};
                       }
                       return w;
                     },
                     {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(AllreduceSlowLinkTest, EvidenceAndCostFromPeerCapacity) {
  auto found =
      FindingsOf(kAllreduceSlowLink, ShapedRank(3, 0, 2.1 * MB, 21 * MB));
  ASSERT_EQ(found.size(), 1u);
  const auto& d = found[0].diagnosis;
  // 2/2.1 = 95% used; without exchange times that utilization bounds the
  // time spent on the link: at most a warning.
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_EQ(d.evidence["cost_model"],
            "link_utilization_x_capacity_gap_upper_bound");
  EXPECT_EQ(d.evidence["direction"], "transmit");
  EXPECT_EQ(d.evidence["capacity_source"], "bandwidth_annotation");
  EXPECT_NEAR(d.evidence["utilization_ratio"].get<double>(), 2 / 2.1, 1e-3);
  EXPECT_EQ(d.evidence["peer_utilization_ratio"].size(), 2u);
  // Busy 95% of the time at a tenth of its peers' capacity.
  EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), 2 / 2.1 * 0.9, 1e-3);
  EXPECT_GT(d.evidence["expected_speedup"].get<double>(), 1.0);
  std::string all;
  for (const auto& r : d.recommendations) all += r + "\n";
  EXPECT_THAT(all, ::testing::HasSubstr("egress-bandwidth"));
  EXPECT_THAT(all, ::testing::HasSubstr("fp16_compress_hook"));
}

// A synchronous PS job: three workers exchange the same with two PS.
WindowBuilder SyncPs(const std::vector<double>& rates) {
  WindowBuilder b;
  b.Pod("ctr-ps-0", Role::kPs).Pod("ctr-ps-1", Role::kPs);
  for (size_t i = 0; i < rates.size(); ++i) {
    b.Pod("ctr-worker-" + std::to_string(i), Role::kWorker)
        .Counter(&PodPoint::cpu_periods, 10)
        .Counter(&PodPoint::cpu_throttled_periods, 0.1)
        .Counter(&PodPoint::io_pressure_some_seconds, 0.01)
        .Peer(Key("ctr-ps-0"), Role::kPs, rates[i] / 4, rates[i] / 4)
        .Peer(Key("ctr-ps-1"), Role::kPs, rates[i] / 4, rates[i] / 4);
  }
  return b;
}

class SyncStragglerTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(SyncStragglerTest, Findings) {
  ExpectFindings(kStragglerWorker, GetParam());
}
INSTANTIATE_TEST_SUITE_P(
    Cases, SyncStragglerTest,
    ::testing::Values(
        DetectorCase{"balanced",
                     [] {
                       return SyncPs({MB, MB, MB}).Build();
                     },
                     {}},
        DetectorCase{"throttled_worker_with_equal_bytes",
                     [] {
                       auto b = SyncPs({MB, MB, MB});
                       b.Counter(&PodPoint::cpu_throttled_periods, 6);
                       return b.Build();
                     },
                     {{"ctr-worker-2", L::kEnter}}},
        // Two workers at one rate are no evidence of synchronous
        // training, and one peer too few to compare a cause with.
        DetectorCase{"two_workers_are_not_judged_by_cause",
                     [] {
                       auto b = SyncPs({MB, MB});
                       b.Counter(&PodPoint::io_pressure_some_seconds, 0.5);
                       return b.Build();
                     },
                     {}},
        // A TF2 chief exchanges little and may be busy: never a straggler.
        DetectorCase{"chief_exchanging_little",
                     [] {
                       auto b = SyncPs({MB, MB, MB});
                       b.Pod("ctr-chief-0", Role::kChief)
                           .Counter(&PodPoint::cpu_periods, 10)
                           .Counter(&PodPoint::cpu_throttled_periods, 8)
                           .Peer(Key("ctr-ps-0"), Role::kPs, 1e3, 1e3);
                       return b.Build();
                     },
                     {}},
        DetectorCase{"chief_among_four_workers",
                     [] {
                       auto b = SyncPs({MB, MB, MB, MB});
                       b.Pod("ctr-chief-0", Role::kChief)
                           .Peer(Key("ctr-ps-0"), Role::kPs, 1e4, 1e4);
                       return b.Build();
                     },
                     {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(SyncStragglerTest, EvidenceNamesTheCauseRule) {
  auto b = SyncPs({MB, MB, MB});
  b.Counter(&PodPoint::cpu_throttled_periods, 6);
  auto found = FindingsOf(kStragglerWorker, b.Build());
  ASSERT_EQ(found.size(), 1u);
  const auto& ev = found[0].diagnosis.evidence;
  EXPECT_EQ(ev["rule"], "cause");
  EXPECT_EQ(ev["cause"], "cpu_throttled");
  EXPECT_EQ(ev["synchronous"], true);
  EXPECT_NEAR(ev["causes"]["throttled_ratio"]["value"].get<double>(), 0.6,
              1e-3);
}

// Hot PS advice names only the APIs of the job's framework generation.
std::string HotPsAdvice(Framework framework) {
  WindowBuilder b;
  PsJob(b, {8 * MB, 0.5 * MB, 0.5 * MB}, 3);
  Window w = b.Build();
  for (auto& [_, t] : w.pods) t.meta.framework = framework;
  auto found = FindingsOf(kHotParameterServer, w);
  EXPECT_EQ(found.size(), 1u);
  std::string all;
  for (const auto& f : found) {
    for (const auto& r : f.diagnosis.recommendations) all += r + "\n";
  }
  return all;
}

TEST(HotPsAdviceTest, VersionAware) {
  using ::testing::HasSubstr;
  using ::testing::Not;
  const std::string tf1 = HotPsAdvice(Framework::kTensorFlow1);
  EXPECT_THAT(tf1, HasSubstr("fixed_size_partitioner(num_shards=3)"));
  EXPECT_THAT(tf1, HasSubstr("GreedyLoadBalancingStrategy"));
  EXPECT_THAT(tf1, Not(HasSubstr("tf.distribute")));
  const std::string tf2 = HotPsAdvice(Framework::kTensorFlow2);
  EXPECT_THAT(tf2, HasSubstr("partitioners.MinSizePartitioner"));
  EXPECT_THAT(tf2, HasSubstr("max_shards=3"));
  EXPECT_THAT(tf2, Not(HasSubstr("tf.contrib")));
  EXPECT_THAT(tf2, Not(HasSubstr("tf.compat.v1")));
  const std::string unknown = HotPsAdvice(Framework::kUnknown);
  EXPECT_THAT(unknown, HasSubstr("TF 1.x: "));
  EXPECT_THAT(unknown, HasSubstr("TF 2.x: "));
  EXPECT_THAT(unknown, HasSubstr("GreedyLoadBalancingStrategy"));
  EXPECT_THAT(unknown, HasSubstr("MinSizePartitioner"));
  const std::string mxnet = HotPsAdvice(Framework::kMXNet);
  EXPECT_THAT(mxnet, HasSubstr("MXNET_KVSTORE_BIGARRAY_BOUND"));
  EXPECT_THAT(mxnet, Not(HasSubstr("tf.")));
}

}  // namespace
}  // namespace trainscope::diagnosis::testing
