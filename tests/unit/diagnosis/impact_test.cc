// The cost models of docs/diagnosis.md ("Cost and expected speed-up") and
// the severities they imply.
#include "diagnosis/impact.h"

#include "detector_test_main.h"

namespace trainscope::diagnosis::testing {
namespace {

constexpr double MB = 1e6;

TEST(ImpactTest, SeverityFollowsTheCost) {
  struct Row {
    double cost;
    Severity want;
  };
  for (const Row& r :
       {Row{0, Severity::kInfo}, Row{0.049, Severity::kInfo},
        Row{0.05, Severity::kWarning}, Row{0.5, Severity::kWarning},
        Row{0.51, Severity::kCritical}}) {
    EXPECT_EQ(SeverityOfCost(r.cost), r.want) << r.cost;
  }
}

TEST(ImpactTest, SpeedupAndCostAreInverse) {
  EXPECT_DOUBLE_EQ(SpeedupOfCost(0), 1);
  EXPECT_DOUBLE_EQ(SpeedupOfCost(0.5), 2);
  EXPECT_NEAR(SpeedupOfCost(0.99), 20, 1e-9);  // capped at 0.95
  EXPECT_DOUBLE_EQ(CostOfSpeedup(2), 0.5);
  EXPECT_DOUBLE_EQ(CostOfSpeedup(0.8), 0);
}

TEST(ImpactTest, SetImpactWritesEvidenceAndKeepsTheFloor) {
  Diagnosis d;
  SetImpact(d, 0.01, "m", Severity::kWarning);
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_DOUBLE_EQ(d.evidence["cost_fraction"].get<double>(), 0.01);
  EXPECT_NEAR(d.evidence["expected_speedup"].get<double>(), 1.0101, 1e-4);
  EXPECT_EQ(d.evidence["cost_model"], "m");
}

// 2 PS, ps-0 carries 90% of 4 MB/s per worker; the workers spend `busy` of
// their time exchanging with it.
Window SkewedJob(double busy) {
  WindowBuilder b;
  PsJob(b, {3.6 * MB, 0.4 * MB}, 3);
  for (int w = 0; w < 3; ++w) {
    b.Pod("ctr-worker-" + std::to_string(w), Role::kWorker)
        .Peer(Key("ctr-ps-0"), Role::kPs, 1.8 * MB, 1.8 * MB)
        .Peer(Key("ctr-ps-1"), Role::kPs, 0.2 * MB, 0.2 * MB)
        .Exchange(Key("ctr-ps-0"), busy)
        .Exchange(Key("ctr-ps-1"), busy / 9);
  }
  return b.Build();
}

TEST(HotPsImpactTest, HarmlessSkewIsInfo) {
  auto found = FindingsOf(kHotParameterServer, SkewedJob(0.03));
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  // 0.03 x (1 - 0.5 / 0.9) = 1.3%.
  EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), 0.01333, 1e-4);
  EXPECT_EQ(d.evidence["cost_model"], "worker_exchange_share");
  EXPECT_EQ(d.severity, Severity::kInfo);
}

TEST(HotPsImpactTest, CostlySkewIsCritical) {
  auto found = FindingsOf(kHotParameterServer, SkewedJob(0.9));
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  // 0.9 x 0.444 = 0.4: the job would run 1.67x as fast balanced.
  EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), 0.4, 1e-3);
  EXPECT_NEAR(d.evidence["expected_speedup"].get<double>(), 1.6667, 1e-3);
  EXPECT_EQ(d.severity, Severity::kWarning);
}

TEST(HotPsImpactTest, WithoutExchangeTimesThePsBusyRatioStandsIn) {
  WindowBuilder b;
  PsJob(b, {3.6 * MB, 0.4 * MB}, 3);
  b.Pod("ctr-ps-0", Role::kPs)
      .Counter(&PodPoint::cpu_usage_seconds, 0.5)
      .Gauge(&PodPoint::cpu_limit_cores, 1.0);
  auto found = FindingsOf(kHotParameterServer, b.Build());
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  EXPECT_EQ(d.evidence["cost_model"], "ps_busy_ratio");
  EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), 0.5 * (1 - 0.5 / 0.9),
              1e-3);
}

// A PS whose link runs at capacity queues its workers: they wait on it
// whenever they do not compute, longer than their exchange bursts show (a
// shaped sender pauses inside one answer). `link` is the share of ps-0's
// shaped egress its 1.8 MB/s fill.
Window SaturatedPsJob(double link, double worker_cpu, double exchange) {
  WindowBuilder b;
  PsJob(b, {3.6 * MB, 0.4 * MB}, 3);
  b.Pod("ctr-ps-0", Role::kPs)
      .Counter(&PodPoint::network_transmit_bytes, 1.8 * MB);
  b.Meta().egress_limit_bytes_per_second = 1.8 * MB / link;
  // Its CPU at the limit says nothing about its workers: not a link.
  b.Counter(&PodPoint::cpu_usage_seconds, 1.0)
      .Gauge(&PodPoint::cpu_limit_cores, 1.0);
  for (int w = 0; w < 3; ++w) {
    b.Pod("ctr-worker-" + std::to_string(w), Role::kWorker)
        .Counter(&PodPoint::cpu_usage_seconds, worker_cpu)
        .Peer(Key("ctr-ps-0"), Role::kPs, 1.8 * MB, 1.8 * MB)
        .Peer(Key("ctr-ps-1"), Role::kPs, 0.2 * MB, 0.2 * MB)
        .Exchange(Key("ctr-ps-0"), exchange)
        .Exchange(Key("ctr-ps-1"), exchange / 9);
  }
  return b.Build();
}

TEST(WorkerWaitTest, SaturatedPsRaisesTheShareToItsBusyRatio) {
  const WindowStats stats =
      ComputeStats(SaturatedPsJob(0.9, 0.05, 0.5), TimeRange{});
  EXPECT_NEAR(*PsLinkBusyRatio(stats.pods.at(Key("ctr-ps-0"))), 0.9, 1e-6);
  PodMeta job;
  job.namespace_name = "training";
  job.training_job = "ctr";
  // Saturated, the workers not computing 0.95 of their time: 0.95.
  auto wait = WorkerWaitShare(stats, job, Key("ctr-ps-0"), 0.9);
  ASSERT_TRUE(wait.has_value());
  EXPECT_NEAR(wait->share, 0.95, 1e-9);
  EXPECT_NEAR(wait->exchange_share, 0.5, 1e-9);
  EXPECT_TRUE(wait->raised);
  // Not saturated: the bursts' figure.
  wait = WorkerWaitShare(stats, job, Key("ctr-ps-0"), 0.6);
  ASSERT_TRUE(wait.has_value());
  EXPECT_NEAR(wait->share, 0.5, 1e-9);
  EXPECT_FALSE(wait->raised);
  EXPECT_FALSE(WorkerWaitShare(stats, job, Key("ctr-ps-9"), 1.0).has_value());
}

// Two PS links shaped alike: the capacity ratio (1), not the bursts' paces,
// says a link as fast as the other's gives nothing back.
TEST(LinkImpactTest, EqualShapedPsLinksHaveNoCapacityGap) {
  WindowBuilder b;
  PsJob(b, {2 * MB, 2 * MB}, 2);
  for (const char* ps : {"ctr-ps-0", "ctr-ps-1"}) {
    b.Pod(ps, Role::kPs).Counter(&PodPoint::network_transmit_bytes, 0.95 * MB);
    b.Meta().egress_limit_bytes_per_second = 1 * MB;
  }
  for (int w = 0; w < 2; ++w) {
    b.Pod("ctr-worker-" + std::to_string(w), Role::kWorker)
        .Counter(&PodPoint::cpu_usage_seconds, 0.05)
        .Peer(Key("ctr-ps-0"), Role::kPs, 1 * MB, 1 * MB)
        .Peer(Key("ctr-ps-1"), Role::kPs, 1 * MB, 1 * MB)
        .Exchange(Key("ctr-ps-0"), 0.5)
        .Exchange(Key("ctr-ps-1"), 0.3);  // paces 40% apart: burst noise
  }
  auto found = FindingsOf(kNetworkSaturated, b.Build());
  ASSERT_EQ(found.size(), 2u);
  for (const auto& f : found) {
    EXPECT_EQ(f.diagnosis.evidence["cost_model"],
              "exchange_share_x_capacity_gap");
    EXPECT_NEAR(f.diagnosis.evidence["capacity_ratio"].get<double>(), 1, 1e-9);
    EXPECT_EQ(f.diagnosis.severity, Severity::kInfo);
  }
}

TEST(WorkerWaitTest, WorkersThatComputeDoNotWait) {
  // Saturated, but the workers compute 70% of their time: they wait at
  // most 30%, less than the bursts already show.
  const WindowStats stats =
      ComputeStats(SaturatedPsJob(0.95, 0.7, 0.5), TimeRange{});
  PodMeta job;
  job.namespace_name = "training";
  job.training_job = "ctr";
  auto wait = WorkerWaitShare(stats, job, Key("ctr-ps-0"), 0.95);
  ASSERT_TRUE(wait.has_value());
  EXPECT_NEAR(wait->share, 0.5, 1e-9);
  EXPECT_FALSE(wait->raised);
}

TEST(HotPsImpactTest, SaturatedHotPsCostsTheWorkersWait) {
  auto found = FindingsOf(kHotParameterServer, SaturatedPsJob(0.9, 0.05, 0.5));
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  EXPECT_EQ(d.evidence["cost_model"], "saturated_ps_wait_share");
  EXPECT_NEAR(d.evidence["worker_wait_share"].get<double>(), 0.95, 1e-3);
  EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), 0.95 * (1 - 0.5 / 0.9),
              1e-3);
}

TEST(StragglerImpactTest, AsyncJobGainsTheStragglersMissingSteps) {
  WindowBuilder b;
  PsJob(b, {2 * MB, 2 * MB}, 4);
  for (int w = 0; w < 3; ++w) {
    b.Pod("ctr-worker-" + std::to_string(w), Role::kWorker)
        .Peer(Key("ctr-ps-0"), Role::kPs, 1 * MB, 1 * MB)
        .Peer(Key("ctr-ps-1"), Role::kPs, 1 * MB, 1 * MB)
        .Gauge(&PodPoint::steps_per_second, 2.0);
  }
  b.Pod("ctr-worker-3", Role::kWorker)
      .Peer(Key("ctr-ps-0"), Role::kPs, 0.25 * MB, 0.25 * MB)
      .Peer(Key("ctr-ps-1"), Role::kPs, 0.25 * MB, 0.25 * MB)
      .Gauge(&PodPoint::steps_per_second, 0.5);
  auto found = FindingsOf(kStragglerWorker, b.Build());
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  EXPECT_EQ(d.pod, "ctr-worker-3");
  EXPECT_EQ(d.evidence["cost_model"], "job_step_rate");
  // 6.5 steps/s now, 8 with worker-3 at the median: 1.23x.
  EXPECT_NEAR(d.evidence["expected_speedup"].get<double>(), 8.0 / 6.5, 1e-3);
  EXPECT_NEAR(d.evidence["job_steps_per_second"].get<double>(), 6.5, 1e-6);
  EXPECT_EQ(d.severity, Severity::kWarning);
}

TEST(StragglerImpactTest, WithoutStepRatesTheExchangeStandsIn) {
  WindowBuilder b;
  PsJob(b, {2 * MB, 2 * MB}, 4);
  b.Pod("ctr-worker-3", Role::kWorker)
      .Peer(Key("ctr-ps-0"), Role::kPs, 0.25 * MB, 0.25 * MB)
      .Peer(Key("ctr-ps-1"), Role::kPs, 0.25 * MB, 0.25 * MB);
  auto found = FindingsOf(kStragglerWorker, b.Build());
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  EXPECT_EQ(d.evidence["cost_model"], "exchange_rate");
  // ratio 0.25, 4 workers: 4 / 3.25.
  EXPECT_NEAR(d.evidence["expected_speedup"].get<double>(), 4 / 3.25, 1e-3);
}

TEST(GpuImpactTest, WorkerWaitingOnItsPsIsNamedThoughItUsesNoCpu) {
  WindowBuilder b;
  b.Pod("ctr-ps-0", Role::kPs);
  b.Pod("ctr-worker-0", Role::kWorker)
      .Counter(&PodPoint::cpu_usage_seconds, 0.03)
      .Gpu(0.05)
      .Peer(Key("ctr-ps-0"), Role::kPs, 1 * MB, 1 * MB)
      .Exchange(Key("ctr-ps-0"), 0.8)
      .Gauge(&PodPoint::steps_per_second, 0.7);
  auto found = FindingsOf(kGpuUnderutilized, b.Build());
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), 0.95, 1e-6);
  // What the GPU waits on decides what a fix gives: a bound, at most warning.
  EXPECT_EQ(d.evidence["cost_model"], "gpu_idle_share_upper_bound");
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_THAT(d.summary, ::testing::HasSubstr("while it trains"));
}

// The gpu-underutilized scenario: the GPU worker keeps its GPU-less peer's
// pace in a PS job, so the job loses no steps; the idle GPU is still paid
// for, and stays a warning.
TEST(GpuImpactTest, IdleGpuOfAWorkerThatKeepsPaceIsStillAWarning) {
  WindowBuilder b;
  b.Pod("vis-ps-0", Role::kPs);
  b.Pod("vis-worker-0", Role::kWorker)
      .Counter(&PodPoint::cpu_usage_seconds, 0.1)
      .Gpu(0.03)
      .Peer(Key("vis-ps-0"), Role::kPs, 1 * MB, 1 * MB)
      .Gauge(&PodPoint::steps_per_second, 2.0);
  b.Pod("vis-worker-1", Role::kWorker)
      .Counter(&PodPoint::cpu_usage_seconds, 0.1)
      .Peer(Key("vis-ps-0"), Role::kPs, 1 * MB, 1 * MB)
      .Gauge(&PodPoint::steps_per_second, 2.0);
  auto found = FindingsOf(kGpuUnderutilized, b.Build());
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  EXPECT_DOUBLE_EQ(d.evidence["cost_fraction"].get<double>(), 0.0);
  EXPECT_NEAR(d.evidence["idle_gpus"].get<double>(), 0.97, 1e-6);
  EXPECT_EQ(d.severity, Severity::kWarning);
}

TEST(GpuImpactTest, IdlePodIsNotNamed) {
  WindowBuilder b;
  b.Pod("ctr-worker-0", Role::kWorker)
      .Counter(&PodPoint::cpu_usage_seconds, 0.01)
      .Gpu(0.0);
  EXPECT_TRUE(FindingsOf(kGpuUnderutilized, b.Build()).empty());
}

// The straggler scenario: worker-3 throttled to a quarter of its peers'
// pace, stalled 77% of its time. Fixed, it adds its missing steps: 1.23x
// for the asynchronous job, not the 4.3x of its own step.
TEST(JobCostTest, SlowWorkerOfAnAsyncJobCostsItsShare) {
  WindowBuilder b;
  for (int w = 0; w < 4; ++w) {
    b.Pod("ctr-worker-" + std::to_string(w), Role::kWorker)
        .Gauge(&PodPoint::steps_per_second, w == 3 ? 0.475 : 2.0);
  }
  const WindowStats stats = ComputeStats(b.Build(), TimeRange{});
  std::string model = "cpu_pressure";
  const double cost = JobCostOfPod(stats, Key("ctr-worker-3"), 0.77, model);
  EXPECT_EQ(model, "cpu_pressure_x_job_share");
  EXPECT_NEAR(SpeedupOfCost(cost), 8.0 / 6.475, 1e-3);
  model = "gpu_idle_share_upper_bound";
  JobCostOfPod(stats, Key("ctr-worker-3"), 0.5, model);
  EXPECT_EQ(model, "gpu_idle_share_x_job_share_upper_bound");
  // A worker at its peers' pace (synchronous): the whole job waits on it.
  model = "cpu_pressure";
  EXPECT_DOUBLE_EQ(JobCostOfPod(stats, Key("ctr-worker-0"), 0.3, model), 0.3);
  EXPECT_EQ(model, "cpu_pressure");
}

TEST(ExchangeShareTest, FromTheWorkersElseFromThePeer) {
  WindowBuilder b;
  b.Pod("ctr-ps-0", Role::kPs)
      .Peer(Key("ctr-worker-0"), Role::kWorker, 1 * MB, 1 * MB)
      .Exchange(Key("ctr-worker-0"), 0.4)
      .Peer(Key("ctr-worker-1"), Role::kWorker, 1 * MB, 1 * MB)
      .Exchange(Key("ctr-worker-1"), 0.2);
  const WindowStats stats = ComputeStats(b.Build(), TimeRange{});
  PodMeta job;
  job.namespace_name = "training";
  job.training_job = "ctr";
  auto share = WorkerExchangeShare(stats, job, Key("ctr-ps-0"));
  ASSERT_TRUE(share.has_value());
  EXPECT_NEAR(*share, 0.3, 1e-9);
  EXPECT_FALSE(WorkerExchangeShare(stats, job, Key("ctr-ps-9")).has_value());
}

// 2 PS, 2 workers, evenly loaded; the workers spend `exchange` of their
// time in exchange bursts with ctr-ps-1, wait `wait` (negative: not
// measured) on its answers, and compute `worker_cpu` of it. ctr-ps-1's
// link is 1 MB/s shaped at `link` busy; with `cpu_stall` it is at its
// 0.05-core CPU limit, stalled that share of the time. They wait
// `ps0_wait` (when >= 0) on ctr-ps-0, which moves as many bytes.
Window WaitingOnPs1(double exchange, double wait, double worker_cpu,
                    double link, std::optional<double> cpu_stall = {},
                    double ps0_wait = -1) {
  WindowBuilder b;
  PsJob(b, {1 * MB, 1 * MB}, 2);
  b.Pod("ctr-ps-1", Role::kPs)
      .Counter(&PodPoint::network_transmit_bytes, 1 * MB);
  b.Meta().egress_limit_bytes_per_second = 1 * MB / link;
  if (cpu_stall) {
    b.Counter(&PodPoint::cpu_usage_seconds, 0.05)
        .Gauge(&PodPoint::cpu_limit_cores, 0.05)
        .Counter(&PodPoint::cpu_pressure_some_seconds, *cpu_stall);
  }
  for (int w = 0; w < 2; ++w) {
    b.Pod("ctr-worker-" + std::to_string(w), Role::kWorker)
        .Counter(&PodPoint::cpu_usage_seconds, worker_cpu)
        .Peer(Key("ctr-ps-0"), Role::kPs, 0.5 * MB, 0.5 * MB)
        .Peer(Key("ctr-ps-1"), Role::kPs, 0.5 * MB, 0.5 * MB)
        .Exchange(Key("ctr-ps-1"), exchange)
        .Exchange(Key("ctr-ps-0"), 0.05);
    if (wait >= 0) b.Wait(Key("ctr-ps-1"), wait);
    if (ps0_wait >= 0) b.Wait(Key("ctr-ps-0"), ps0_wait);
  }
  return b.Build();
}

TEST(WorkerWaitTest, RequestsToAnswersStandInWhereLarger) {
  struct Case {
    const char* name;
    double exchange, wait, worker_cpu, link;
    double want_share;
    const char* want_model;
  };
  const Case cases[] = {
      {"a throttled PS answers in pieces: the wait, not the bursts", 0.07, 0.8,
       0.15, 0.1, 0.8, "worker_request_wait_share"},
      {"waits no longer than the bursts: the bursts", 0.4, 0.3, 0.15, 0.1, 0.4,
       "worker_exchange_share"},
      {"not measured (an older agent): the bursts", 0.4, -1, 0.15, 0.1, 0.4,
       "worker_exchange_share"},
      {"a saturated link and idle workers: their time not computing", 0.3, 0.6,
       0.05, 0.9, 0.95, "saturated_ps_wait_share"},
      {"a saturated link, the requests as much as the idle time", 0.3, 0.8, 0.2,
       0.9, 0.8, "worker_request_wait_share"},
      {"waits over the time not computing (an answer sent on while the "
       "worker computes): capped there",
       0.07, 0.8, 0.5, 0.1, 0.5, "worker_request_wait_share"},
  };
  PodMeta job;
  job.namespace_name = "training";
  job.training_job = "ctr";
  for (const Case& c : cases) {
    const WindowStats stats = ComputeStats(
        WaitingOnPs1(c.exchange, c.wait, c.worker_cpu, c.link), TimeRange{});
    auto wait =
        WorkerWaitShare(stats, job, Key("ctr-ps-1"),
                        PsLinkBusyRatio(stats.pods.at(Key("ctr-ps-1"))));
    ASSERT_TRUE(wait.has_value()) << c.name;
    EXPECT_NEAR(wait->share, c.want_share, 1e-9) << c.name;
    EXPECT_NEAR(wait->exchange_share, c.exchange, 1e-9) << c.name;
    EXPECT_EQ(wait->raised, c.want_share > c.exchange) << c.name;
    nlohmann::json evidence;
    EXPECT_EQ(NoteWorkerWait(*wait, evidence), c.want_model) << c.name;
    EXPECT_EQ(evidence.contains("worker_request_wait_share"), c.wait >= 0)
        << c.name;
  }
  // The PS' own waits are on its workers (its gradient pulls): never read.
  WindowBuilder b;
  b.Pod("ctr-ps-0", Role::kPs)
      .Peer(Key("ctr-worker-0"), Role::kWorker, 1 * MB, 1 * MB)
      .Exchange(Key("ctr-worker-0"), 0.2)
      .Wait(Key("ctr-worker-0"), 0.9);
  const WindowStats ps_only = ComputeStats(b.Build(), TimeRange{});
  EXPECT_FALSE(
      WorkerRequestWaitShare(ps_only, job, Key("ctr-ps-0")).has_value());
}

// ctr-ps-1 at its CPU limit, stalled 0.9 of the time (PSI cpu some); its
// workers' bursts with it are 0.07 of their time, their waits on its
// answers 0.8: the cost is the part of that wait beyond what ctr-ps-0 (CPU
// to spare) makes them wait for as many bytes, else the wait times the
// stall.
TEST(PsCpuImpactTest, AThrottledPsCostsItsWorkersWait) {
  struct Case {
    const char* name;
    double wait;
    double ps0_wait;
    double want_cost;
    const char* want_model;
  };
  const Case cases[] = {
      {"waits measured, none on the other PS: the stall", 0.8, -1, 0.8 * 0.9,
       "worker_request_wait_share_x_cpu_pressure"},
      {"no waits: the bursts and the stall", -1, -1, 0.07 * 0.9,
       "worker_exchange_share_x_cpu_pressure"},
      {"the other PS answers 16x as fast: the gap, not the stall", 0.8, 0.05,
       0.8 * (1 - 0.05 / 0.8), "worker_request_wait_share_x_wait_pace_gap"},
      {"the other PS is slow too (a loaded node): the gap", 0.8, 0.6,
       0.8 * (1 - 0.6 / 0.8), "worker_request_wait_share_x_wait_pace_gap"},
      {"the other PS slower still: nothing to gain", 0.8, 0.9, 0,
       "worker_request_wait_share_x_wait_pace_gap"},
  };
  for (const Case& c : cases) {
    auto found =
        FindingsOf(kPsCpuSaturated,
                   WaitingOnPs1(0.07, c.wait, 0.15, 0.1, 0.9, c.ps0_wait));
    ASSERT_EQ(found.size(), 1u) << c.name;
    const Diagnosis& d = found[0].diagnosis;
    EXPECT_EQ(d.pod, "ctr-ps-1") << c.name;
    EXPECT_EQ(d.evidence["cost_model"], c.want_model) << c.name;
    EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), c.want_cost, 1e-3)
        << c.name;
  }
}

}  // namespace
}  // namespace trainscope::diagnosis::testing
