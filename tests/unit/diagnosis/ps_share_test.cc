#include "diagnosis/ps_share.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace trainscope::diagnosis::testing
