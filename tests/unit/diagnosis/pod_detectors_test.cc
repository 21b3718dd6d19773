// Table-driven tests of the per-pod detectors: cpu_throttled,
// parameter_server_cpu_saturated, network_saturated, memory_pressure,
// gpu_underutilized.
#include "detector_test_main.h"

namespace trainscope::diagnosis::testing {
namespace {

using L = Finding::Level;

// One pod with CFS periods growing at 10/s and `ratio` of them throttled.
Window Throttled(double ratio, double periods_per_second = 10) {
  return WindowBuilder()
      .Pod("ctr-worker-0", Role::kWorker)
      .Counter(&PodPoint::cpu_periods, periods_per_second)
      .Counter(&PodPoint::cpu_throttled_periods, periods_per_second * ratio)
      .Build();
}

class CpuThrottledTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(CpuThrottledTest, Findings) {
  ExpectFindings(kCpuThrottled, GetParam());
}
INSTANTIATE_TEST_SUITE_P(
    Cases, CpuThrottledTest,
    ::testing::Values(DetectorCase{"heavy",
                                   [] { return Throttled(0.6); },
                                   {{"ctr-worker-0", L::kEnter}}},
                      DetectorCase{"at_enter",
                                   [] { return Throttled(0.25); },
                                   {{"ctr-worker-0", L::kEnter}}},
                      DetectorCase{"between_exit_and_enter",
                                   [] { return Throttled(0.2); },
                                   {{"ctr-worker-0", L::kHold}}},
                      DetectorCase{"light", [] { return Throttled(0.1); }, {}},
                      DetectorCase{"none", [] { return Throttled(0); }, {}},
                      // 1 period/s over 10 s: too few periods to judge.
                      DetectorCase{"too_few_periods",
                                   [] { return Throttled(0.9, 0.5); },
                                   {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(CpuThrottledTest, SeverityFollowsTheStall) {
  // Throttled in 60% of its periods and stalled 55% of the time: critical.
  Window heavy_window = Throttled(0.6);
  for (auto& p : heavy_window.pods.begin()->second.points)
    p.cpu_pressure_some_seconds = 1 + 0.55 * p.t;
  auto heavy = FindingsOf(kCpuThrottled, heavy_window);
  ASSERT_EQ(heavy.size(), 1u);
  EXPECT_EQ(heavy[0].diagnosis.severity, Severity::kCritical);
  EXPECT_EQ(heavy[0].diagnosis.evidence["cost_model"], "cpu_pressure");
  // Without PSI the throttled share only bounds the stall: at most warning.
  auto bound = FindingsOf(kCpuThrottled, Throttled(0.6));
  ASSERT_EQ(bound.size(), 1u);
  EXPECT_EQ(bound[0].diagnosis.severity, Severity::kWarning);
  auto mild = FindingsOf(kCpuThrottled, Throttled(0.3));
  ASSERT_EQ(mild.size(), 1u);
  EXPECT_EQ(mild[0].diagnosis.severity, Severity::kWarning);
  EXPECT_NEAR(mild[0].diagnosis.evidence["throttled_ratio"].get<double>(), 0.3,
              1e-9);
}

Window PsCpu(Role role, double cores, std::optional<double> limit,
             std::optional<double> node_cpus) {
  WindowBuilder b;
  b.Node(node_cpus, std::nullopt)
      .Pod("ctr-ps-0", role)
      .Counter(&PodPoint::cpu_usage_seconds, cores);
  if (limit) b.Gauge(&PodPoint::cpu_limit_cores, *limit);
  return b.Build();
}

class PsCpuTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(PsCpuTest, Findings) { ExpectFindings(kPsCpuSaturated, GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Cases, PsCpuTest,
    ::testing::Values(
        DetectorCase{"at_limit",
                     [] { return PsCpu(Role::kPs, 0.97, 1.0, 2); },
                     {{"ctr-ps-0", L::kEnter}}},
        DetectorCase{"at_enter",
                     [] { return PsCpu(Role::kPs, 1.8, 2.0, 8); },
                     {{"ctr-ps-0", L::kEnter}}},
        DetectorCase{"holds_above_exit",
                     [] { return PsCpu(Role::kPs, 0.85, 1.0, 8); },
                     {{"ctr-ps-0", L::kHold}}},
        DetectorCase{"half", [] { return PsCpu(Role::kPs, 0.5, 1.0, 8); }, {}},
        DetectorCase{"unlimited_uses_node_cores",
                     [] { return PsCpu(Role::kPs, 3.8, std::nullopt, 4); },
                     {{"ctr-ps-0", L::kEnter}}},
        DetectorCase{
            "unlimited_unknown_node",
            [] { return PsCpu(Role::kPs, 3.8, std::nullopt, std::nullopt); },
            {}},
        DetectorCase{"worker_is_not_a_ps",
                     [] { return PsCpu(Role::kWorker, 1.0, 1.0, 8); },
                     {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// A worker sending `tx` bytes/s (receiving `rx`); capacity from the NIC
// (whose own counters carry the pod's traffic) and/or the annotation.
Window Net(double tx, std::optional<double> nic,
           std::optional<double> egress_limit, double rx = 0) {
  WindowBuilder b;
  b.Node(4, nic)
      .NodeTraffic(rx, tx)
      .Pod("ctr-worker-0", Role::kWorker)
      .Counter(&PodPoint::network_transmit_bytes, tx)
      .Counter(&PodPoint::network_receive_bytes, rx);
  b.Meta().egress_limit_bytes_per_second = egress_limit;
  return b.Build();
}

class NetworkTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(NetworkTest, Findings) { ExpectFindings(kNetworkSaturated, GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Cases, NetworkTest,
    ::testing::Values(
        // "10M" egress annotation = 1.25 MB/s; 1.1 MB/s is 88%.
        DetectorCase{"shaped_egress",
                     [] { return Net(1.1e6, 125e6, 1.25e6); },
                     {{"ctr-worker-0", L::kEnter}}},
        DetectorCase{"nic_1gbe_saturated_rx",
                     [] { return Net(0, 125e6, std::nullopt, 120e6); },
                     {{"ctr-worker-0", L::kEnter}}},
        DetectorCase{"at_enter",
                     [] { return Net(100e6, 125e6, std::nullopt); },
                     {{"ctr-worker-0", L::kEnter}}},
        DetectorCase{"holds",
                     [] { return Net(0.9e6, std::nullopt, 1.25e6); },
                     {{"ctr-worker-0", L::kHold}}},
        DetectorCase{
            "busy_but_fine", [] { return Net(50e6, 125e6, std::nullopt); }, {}},
        // Ingress limit does not cap transmit.
        DetectorCase{"other_direction_limit",
                     [] {
                       WindowBuilder b;
                       b.Node(4, 125e6)
                           .Pod("ctr-worker-0", Role::kWorker)
                           .Counter(&PodPoint::network_transmit_bytes, 1.2e6);
                       b.Meta().ingress_limit_bytes_per_second = 1.25e6;
                       return b.Build();
                     },
                     {}},
        // Traffic to pods on the same node never touches the NIC.
        DetectorCase{"intra_node_traffic_is_not_on_the_link",
                     [] {
                       WindowBuilder b;
                       b.Node(4, 125e6)
                           .NodeTraffic(1e6, 1e6)
                           .Pod("ctr-worker-0", Role::kWorker)
                           .Counter(&PodPoint::network_receive_bytes, 120e6);
                       return b.Build();
                     },
                     {}},
        // Without the node's NIC counters the NIC cannot be judged.
        DetectorCase{"nic_without_node_counters",
                     [] {
                       WindowBuilder b;
                       b.Node(4, 125e6)
                           .Pod("ctr-worker-0", Role::kWorker)
                           .Counter(&PodPoint::network_receive_bytes, 120e6);
                       return b.Build();
                     },
                     {}},
        DetectorCase{"no_capacity_known",
                     [] { return Net(1e9, std::nullopt, std::nullopt); },
                     {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

Window Mem(std::optional<double> ws_ratio, std::optional<double> psi,
           double oom_rate = 0) {
  WindowBuilder b;
  b.Pod("ctr-ps-0", Role::kPs).Counter(&PodPoint::oom_events, oom_rate, 0);
  if (ws_ratio) {
    b.Gauge(&PodPoint::memory_limit_bytes, 1e9)
        .Gauge(&PodPoint::memory_working_set_bytes, *ws_ratio * 1e9);
  }
  if (psi) b.Counter(&PodPoint::memory_pressure_some_seconds, *psi);
  return b.Build();
}

class MemoryTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(MemoryTest, Findings) { ExpectFindings(kMemoryPressure, GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Cases, MemoryTest,
    ::testing::Values(DetectorCase{"near_limit",
                                   [] { return Mem(0.95, std::nullopt); },
                                   {{"ctr-ps-0", L::kEnter}}},
                      DetectorCase{"at_enter",
                                   [] { return Mem(0.9, std::nullopt); },
                                   {{"ctr-ps-0", L::kEnter}}},
                      DetectorCase{"holds",
                                   [] { return Mem(0.87, std::nullopt); },
                                   {{"ctr-ps-0", L::kHold}}},
                      DetectorCase{"fine", [] { return Mem(0.5, 0.01); }, {}},
                      DetectorCase{"psi_stalls",
                                   [] { return Mem(0.5, 0.2); },
                                   {{"ctr-ps-0", L::kEnter}}},
                      DetectorCase{"psi_holds",
                                   [] { return Mem(std::nullopt, 0.07); },
                                   {{"ctr-ps-0", L::kHold}}},
                      DetectorCase{"oom_kill",
                                   [] { return Mem(0.5, std::nullopt, 0.1); },
                                   {{"ctr-ps-0", L::kEnter}}},
                      DetectorCase{
                          "unlimited_no_psi",
                          [] { return Mem(std::nullopt, std::nullopt); },
                          {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(MemoryTest, OomKillIsCritical) {
  auto found = FindingsOf(kMemoryPressure, Mem(0.5, std::nullopt, 0.1));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].diagnosis.severity, Severity::kCritical);
}

Window Gpu(double util, double cores, unsigned gpus = 1) {
  return WindowBuilder()
      .Pod("ctr-worker-0", Role::kWorker)
      .Counter(&PodPoint::cpu_usage_seconds, cores)
      .Gpu(util, gpus)
      .Build();
}

class GpuTest : public ::testing::TestWithParam<DetectorCase> {};
TEST_P(GpuTest, Findings) { ExpectFindings(kGpuUnderutilized, GetParam()); }
INSTANTIATE_TEST_SUITE_P(
    Cases, GpuTest,
    ::testing::Values(
        DetectorCase{"idle_gpu_busy_cpu",
                     [] { return Gpu(0.05, 0.8, 2); },
                     {{"ctr-worker-0", L::kEnter}}},
        DetectorCase{"holds",
                     [] { return Gpu(0.3, 0.8); },
                     {{"ctr-worker-0", L::kHold}}},
        DetectorCase{"busy_gpu", [] { return Gpu(0.9, 0.8); }, {}},
        DetectorCase{"pod_idle_too", [] { return Gpu(0.0, 0.01); }, {}},
        DetectorCase{"no_gpu",
                     [] {
                       return WindowBuilder()
                           .Pod("ctr-worker-0", Role::kWorker)
                           .Counter(&PodPoint::cpu_usage_seconds, 1)
                           .Build();
                     },
                     {}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace trainscope::diagnosis::testing
