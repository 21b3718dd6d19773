#include "diagnosis/ps_share.h"

#include <gtest/gtest.h>

#include "detector_cases.h"
#include "synthetic.h"

namespace trainscope::diagnosis::testing {
namespace {

constexpr double MB = 1e6;

std::map<std::string, double> Shares(const JobTraffic& job) {
  std::map<std::string, double> out;
  for (const auto& t : job.ps_traffic) out[t.pod] = t.share;
  return out;
}

TEST(PsShareTest, WorkersSideIsPreferredAndLocalPsIsNotFavoured) {
  WindowBuilder b;
  // ps-0 is local and sees traffic of workers on other nodes too; the one
  // local worker talks to both PS equally.
  b.Pod("ctr-ps-0", Role::kPs)
      .Peer(Key("ctr-worker-0"), Role::kWorker, MB, MB)
      .Peer(Key("ctr-worker-9"), Role::kWorker, 5 * MB, 5 * MB);
  b.Pod("ctr-worker-0", Role::kWorker)
      .Peer(Key("ctr-ps-0"), Role::kPs, MB, MB)
      .Peer(Key("ctr-ps-1"), Role::kPs, MB, MB);
  auto jobs = ComputeJobTraffic(ComputeStats(b.Build()));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].perspective, "workers");
  auto shares = Shares(jobs[0]);
  EXPECT_NEAR(shares["ctr-ps-0"], 0.5, 1e-9);
  EXPECT_NEAR(shares["ctr-ps-1"], 0.5, 1e-9);
  EXPECT_NEAR(jobs[0].total_bytes_per_second, 4 * MB, 1);
  EXPECT_EQ(jobs[0].ps, std::vector<std::string>{"ctr-ps-0"});
  EXPECT_EQ(jobs[0].workers, std::vector<std::string>{"ctr-worker-0"});
}

TEST(PsShareTest, PsSideWhenNoWorkerIsObserved) {
  WindowBuilder b;
  b.Pod("ctr-ps-0", Role::kPs)
      .Peer(Key("ctr-worker-0"), Role::kWorker, 3 * MB, 3 * MB)
      .Peer(Key("ctr-ps-1"), Role::kPs, 9 * MB, 9 * MB);  // PS<->PS ignored
  b.Pod("ctr-ps-1", Role::kPs).Peer(Key("ctr-worker-0"), Role::kWorker, MB, MB);
  auto jobs = ComputeJobTraffic(ComputeStats(b.Build()));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].perspective, "ps");
  EXPECT_NEAR(Shares(jobs[0])["ctr-ps-0"], 0.75, 1e-9);
}

TEST(PsShareTest, ZeroBytesGiveZeroSharesNotNaN) {
  WindowBuilder b;
  b.Pod("ctr-ps-0", Role::kPs).Pod("ctr-ps-1", Role::kPs);
  b.Pod("ctr-worker-0", Role::kWorker)
      .Peer(Key("ctr-ps-0"), Role::kPs, 0, 0)
      .Peer(Key("ctr-ps-1"), Role::kPs, 0, 0);
  auto jobs = ComputeJobTraffic(ComputeStats(b.Build()));
  ASSERT_EQ(jobs.size(), 1u);
  for (const auto& t : jobs[0].ps_traffic) EXPECT_EQ(t.share, 0);
}

TEST(PsShareTest, OtherJobsPsIsNotCounted) {
  WindowBuilder b;
  b.Pod("other-ps-0", Role::kPs, "other");
  b.Pod("ctr-worker-0", Role::kWorker)
      .Peer(Key("ctr-ps-0"), Role::kPs, MB, MB)
      .Peer(Key("other-ps-0"), Role::kPs, MB, MB);
  auto jobs = ComputeJobTraffic(ComputeStats(b.Build()));
  ASSERT_EQ(jobs.size(), 2u);
  const auto& ctr = jobs[0].training_job == "ctr" ? jobs[0] : jobs[1];
  ASSERT_EQ(ctr.ps_traffic.size(), 1u);
  EXPECT_EQ(ctr.ps_traffic[0].pod, "ctr-ps-0");
  EXPECT_EQ(ctr.ps_traffic[0].share, 1.0);
}

TEST(PsShareTest, LocalPsWithoutTrafficIsListedWithZero) {
  WindowBuilder b;
  b.Pod("ctr-ps-2", Role::kPs);
  b.Pod("ctr-worker-0", Role::kWorker).Peer(Key("ctr-ps-0"), Role::kPs, MB, MB);
  auto jobs = ComputeJobTraffic(ComputeStats(b.Build()));
  ASSERT_EQ(jobs[0].ps_traffic.size(), 2u);
  EXPECT_EQ(Shares(jobs[0])["ctr-ps-2"], 0);
}

// Issue 31's held-out case, node by node: a real TF2 job, every variable
// split over 3 PS; node-b holds ps-1 and no worker that reached a PS, node-a
// holds ps-0 and ps-2. From its PS alone a node would call each of them hot.
Window NodeWithSomeOfThePs(const std::vector<std::string>& local_ps) {
  WindowBuilder b;
  for (const auto& ps : local_ps) {
    b.Pod(ps, Role::kPs).Peer(Key("ctr-worker-0"), Role::kWorker, MB, MB);
  }
  Window w = b.Build();
  w.job_ps[PodKey("training", "ctr")] = {"ctr-ps-0", "ctr-ps-1", "ctr-ps-2"};
  return w;
}

TEST(PsShareTest, PsSideNeedsEveryPsOfTheJob) {
  for (const auto& local : std::vector<std::vector<std::string>>{
           {"ctr-ps-1"}, {"ctr-ps-0", "ctr-ps-2"}}) {
    const Window w = NodeWithSomeOfThePs(local);
    auto jobs = ComputeJobTraffic(ComputeStats(w));
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].perspective, kFromSomePs);
    EXPECT_TRUE(jobs[0].ps_traffic.empty());
    EXPECT_TRUE(FindingsOf(kHotParameterServer, w).empty());
  }
  const Window all = NodeWithSomeOfThePs({"ctr-ps-0", "ctr-ps-1", "ctr-ps-2"});
  auto jobs = ComputeJobTraffic(ComputeStats(all));
  EXPECT_EQ(jobs[0].perspective, kFromPs);
  for (const auto& [pod, share] : Shares(jobs[0])) {
    EXPECT_NEAR(share, 1.0 / 3, 1e-9) << pod;
  }
}

// The chief writing the initial values to one PS after another is not the
// job's step traffic: the workers' even exchange decides the shares.
TEST(PsShareTest, TheChiefsTrafficIsNotTheBalance) {
  WindowBuilder b;
  b.Pod("ctr-chief-0", Role::kChief)
      .Peer(Key("ctr-ps-0"), Role::kPs, 0.1 * MB, 12 * MB);
  b.Pod("ctr-worker-0", Role::kWorker)
      .Peer(Key("ctr-ps-0"), Role::kPs, MB, MB)
      .Peer(Key("ctr-ps-1"), Role::kPs, MB, MB)
      .Peer(Key("ctr-ps-2"), Role::kPs, MB, MB);
  b.Pod("ctr-ps-0", Role::kPs)
      .Peer(Key("ctr-chief-0"), Role::kChief, 12 * MB, 0.1 * MB)
      .Peer(Key("ctr-worker-0"), Role::kWorker, MB, MB);
  const Window w = b.Build();
  auto jobs = ComputeJobTraffic(ComputeStats(w));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0].perspective, kFromWorkers);
  for (const auto& [pod, share] : Shares(jobs[0])) {
    EXPECT_NEAR(share, 1.0 / 3, 1e-9) << pod;
  }
  // The chief's exchange is still an edge of the report.
  EXPECT_GT(jobs[0].worker_ps_links.at(Key("ctr-chief-0")).at(Key("ctr-ps-0")),
            0);
  EXPECT_TRUE(FindingsOf(kHotParameterServer, w).empty());
}

// Before the workers train (they exchange with the chief only), the chief's
// writes give no shares at all, from either side.
TEST(PsShareTest, OnlyTheChiefTalkingGivesNoBalance) {
  WindowBuilder b;
  b.Pod("ctr-chief-0", Role::kChief)
      .Peer(Key("ctr-ps-0"), Role::kPs, 0.1 * MB, 12 * MB);
  b.Pod("ctr-worker-0", Role::kWorker)
      .Peer(Key("ctr-chief-0"), Role::kChief, 500, 500);
  b.Pod("ctr-ps-0", Role::kPs)
      .Peer(Key("ctr-chief-0"), Role::kChief, 12 * MB, 0.1 * MB);
  b.Pod("ctr-ps-1", Role::kPs);
  const Window w = b.Build();
  auto jobs = ComputeJobTraffic(ComputeStats(w));
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_FALSE(PsTrafficSkew(jobs[0]).has_value());
  EXPECT_TRUE(FindingsOf(kHotParameterServer, w).empty());
}

}  // namespace
}  // namespace trainscope::diagnosis::testing
