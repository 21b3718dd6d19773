#include "diagnosis/headroom.h"

#include <gtest/gtest.h>

#include "detector_cases.h"
#include "synthetic.h"

namespace trainscope::diagnosis::testing {
namespace {

constexpr double MB = 1e6;

// A PS job: `workers` workers, each exchanging ps_rates[i] bytes/s (half
// each way) with PS i, seen from both ends; PS i's link is shaped to
// `link[i]` bytes/s each way (0: not shaped) and its pod counters carry
// what it exchanges. Each worker runs `steps` steps/s.
struct JobShape {
  std::vector<double> ps_rates;
  std::vector<double> link;
  int workers = 4;
  double steps = 0;
};

Window Job(const JobShape& j) {
  WindowBuilder b;
  for (size_t i = 0; i < j.ps_rates.size(); ++i) {
    b.Pod("ctr-ps-" + std::to_string(i), Role::kPs);
    const double each_way = j.ps_rates[i] / 2 * j.workers;
    b.Counter(&PodPoint::network_receive_bytes, each_way)
        .Counter(&PodPoint::network_transmit_bytes, each_way);
    if (j.link[i] > 0) {
      b.Meta().ingress_limit_bytes_per_second = j.link[i];
      b.Meta().egress_limit_bytes_per_second = j.link[i];
    }
    for (int w = 0; w < j.workers; ++w) {
      b.Peer(Key("ctr-worker-" + std::to_string(w)), Role::kWorker,
             j.ps_rates[i] / 2, j.ps_rates[i] / 2);
    }
  }
  for (int w = 0; w < j.workers; ++w) {
    b.Pod("ctr-worker-" + std::to_string(w), Role::kWorker);
    if (j.steps > 0) b.Gauge(&PodPoint::steps_per_second, j.steps);
    for (size_t i = 0; i < j.ps_rates.size(); ++i) {
      b.Peer(Key("ctr-ps-" + std::to_string(i)), Role::kPs, j.ps_rates[i] / 2,
             j.ps_rates[i] / 2);
    }
  }
  return b.Build();
}

std::vector<JobHeadroom> HeadroomOfWindow(const Window& w) {
  const WindowStats stats = ComputeStats(w);
  return ComputeHeadroom(stats, ComputeJobTraffic(stats),
                         ComputeJobSpeeds(stats));
}

struct HeadroomCase {
  const char* name;
  JobShape job;
  const char* bottleneck_pod;  // "" : no forecast
  double load_factor;
  double max_workers;
};

TEST(HeadroomTest, TheFullestSharedResourceBoundsTheJob) {
  const HeadroomCase cases[] = {
      // ps-0 carries 4 x 1 MB/s of a 10 MB/s link each way: 2.5x.
      {"hot shaped link",
       {{2 * MB, 0.2 * MB}, {10 * MB, 10 * MB}},
       "ctr-ps-0",
       2.5,
       10},
      // Balanced over two shaped links: each at 40%.
      {"balanced", {{MB, MB}, {10 * MB, 10 * MB}}, "ctr-ps-0", 5, 20},
      // The smaller link of the quieter PS is the fuller one.
      {"narrow second link",
       {{2 * MB, MB}, {100 * MB, 2.5 * MB}},
       "ctr-ps-1",
       1.25,
       5},
      // Already past its nominal rate (a token bucket's burst): full, not
      // below 1.
      {"over the shaped rate", {{6 * MB, 0}, {10 * MB, 0}}, "ctr-ps-0", 1, 4},
      // No capacity known anywhere: no forecast.
      {"nothing shaped", {{2 * MB, MB}, {0, 0}}, "", 0, 0},
  };
  for (const auto& c : cases) {
    const auto all = HeadroomOfWindow(Job(c.job));
    if (std::string(c.bottleneck_pod).empty()) {
      EXPECT_TRUE(all.empty()) << c.name;
      continue;
    }
    ASSERT_EQ(all.size(), 1u) << c.name;
    const JobHeadroom& h = all[0];
    EXPECT_EQ(h.bottleneck().resource, kPsLink) << c.name;
    EXPECT_EQ(h.bottleneck().pod, c.bottleneck_pod) << c.name;
    EXPECT_NEAR(h.bottleneck().load_factor, c.load_factor, 1e-6) << c.name;
    EXPECT_EQ(h.workers, 4u) << c.name;
    EXPECT_NEAR(h.max_workers, c.max_workers, 1e-6) << c.name;
  }
}

TEST(HeadroomTest, StepRateForecastFromTheWorkersRate) {
  const auto all =
      HeadroomOfWindow(Job({{2 * MB, 0.2 * MB}, {10 * MB, 10 * MB}, 4, 3}));
  ASSERT_EQ(all.size(), 1u);
  EXPECT_NEAR(*all[0].steps_per_second, 12, 1e-6);
  EXPECT_NEAR(*all[0].max_steps_per_second, 30, 1e-6);
}

TEST(HeadroomTest, PsCpuAgainstItsLimit) {
  Window w = Job({{MB, MB}, {0, 0}});
  auto& ps0 = w.pods[Key("ctr-ps-0")];
  ps0.meta.spec_cpu_limit_cores = 1.0;
  for (auto& p : ps0.points) p.cpu_usage_seconds = 100 + 0.8 * p.t;
  const auto all = HeadroomOfWindow(w);
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0].bottleneck().resource, kPsCpu);
  EXPECT_NEAR(all[0].bottleneck().load_factor, 1.25, 1e-6);
  EXPECT_EQ(DescribeResource(all[0].bottleneck()), "ctr-ps-0's CPU (1 cores)");
}

// Other tenants' traffic on the PS node's uplink does not grow with the
// job: only the job's part scales into the capacity they leave.
TEST(HeadroomTest, NodeUplinkLeavesOtherTenantsOut) {
  WindowBuilder b;
  b.Node(std::nullopt, 10 * MB).NodeTraffic(6 * MB, 6 * MB);
  b.Pod("ctr-ps-0", Role::kPs)
      .Counter(&PodPoint::network_receive_bytes, 2 * MB)
      .Counter(&PodPoint::network_transmit_bytes, 2 * MB);
  for (int w = 0; w < 2; ++w) {
    b.Peer(PodKey("training", "ctr-worker-" + std::to_string(w)), Role::kWorker,
           MB, MB);
  }
  const auto all = HeadroomOfWindow(b.Build());
  ASSERT_EQ(all.size(), 1u);
  const ResourceLoad& top = all[0].bottleneck();
  EXPECT_EQ(top.resource, kNodeUplink);
  EXPECT_EQ(top.node, "node-a");
  // 2 MB/s of the job, 4 MB/s of others: (10 - 4) / 2.
  EXPECT_NEAR(top.load_factor, 3, 1e-6);
}

// The hot-PS findings of a window, with its forecast computed.
std::vector<Finding> HotPsFindings(const Window& w) {
  const WindowStats stats = ComputeStats(w);
  const auto jobs = ComputeJobTraffic(stats);
  const auto headroom = ComputeHeadroom(stats, jobs, ComputeJobSpeeds(stats));
  DetectorInput in{stats, stats, jobs, jobs, &headroom};
  std::vector<Finding> found;
  DetectHotParameterServer(in, {}, {}, found);
  return found;
}

// A hot PS in a paced job costs little now, but its link leaves the job
// no room to grow: a warning that says where scaling stops.
TEST(HeadroomTest, HotPsWithoutHeadroomWarns) {
  const auto found =
      HotPsFindings(Job({{2 * MB, 0.2 * MB}, {4.8 * MB, 4.8 * MB}, 4, 3}));
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found[0].diagnosis;
  EXPECT_EQ(d.pod, "ctr-ps-0");
  EXPECT_GE(d.severity, Severity::kWarning);
  EXPECT_NEAR(d.evidence["headroom"]["bottleneck"]["load_factor"], 1.2, 1e-6);
  EXPECT_NE(d.summary.find("Adding workers beyond 4 will not help"),
            std::string::npos)
      << d.summary;

  // The same skew with a link 10x wider: the cost model alone decides.
  const auto f2 =
      HotPsFindings(Job({{2 * MB, 0.2 * MB}, {48 * MB, 48 * MB}, 4, 3}));
  ASSERT_EQ(f2.size(), 1u);
  EXPECT_FALSE(f2[0].diagnosis.evidence.contains("severity_from"));
  EXPECT_EQ(f2[0].diagnosis.summary.find("Adding workers"), std::string::npos);
}

}  // namespace
}  // namespace trainscope::diagnosis::testing
