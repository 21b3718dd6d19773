// The PS traffic share as the agent computes it: snapshots of cumulative
// per-peer counters -> window -> ComputeJobTraffic. These are the cases of
// the former flows-side computation (collectors/flows/ps_share), kept so
// that moving to the one diagnosis computation lost none of them.
#include <gtest/gtest.h>

#include <optional>

#include "diagnosis/ps_share.h"
#include "diagnosis/snapshot_window.h"

namespace trainscope::diagnosis {
namespace {

PodInfo Pod(const std::string& name, Role role,
            const std::string& job = "ctr") {
  PodInfo p;
  p.uid = "u-" + name;
  p.name = name;
  p.namespace_name = "training";
  p.training_job = job;
  p.role = role;
  return p;
}

Role RoleOfName(const std::string& name) {
  return name.rfind("ps", 0) == 0 ? Role::kPs : Role::kWorker;
}

// (local pod, peer pod or "" for unknown peers, rx, tx), cumulative.
struct Traffic {
  std::string pod, peer;
  uint64_t rx, tx;
};

// Snapshot i (5 s apart) of a node running every pod of `pods`.
std::shared_ptr<const Snapshot> Snap(int i, const PodList& pods,
                                     const std::vector<Traffic>& traffic) {
  auto s = std::make_shared<Snapshot>();
  s->taken_at = std::chrono::system_clock::time_point() +
                std::chrono::hours(24 * 365 * 50) + std::chrono::seconds(5 * i);
  s->sequence = static_cast<uint64_t>(i + 1);
  s->pods = std::make_shared<const PodList>(pods);
  for (const auto& pod : pods) {
    PodSample& sample = s->pod_samples[pod.uid];
    sample.uid = pod.uid;
    sample.cgroup.cpu.usage_seconds = i;
  }
  for (const auto& t : traffic) {
    PeerTrafficSample p;
    p.pod_uid = "u-" + t.pod;
    if (!t.peer.empty()) {
      p.peer_uid = "u-" + t.peer;
      p.peer_namespace = "training";
      p.peer_pod = t.peer;
      p.peer_role = RoleOfName(t.peer);
    }
    p.receive_bytes = t.rx;
    p.transmit_bytes = t.tx;
    s->peer_traffic.push_back(p);
  }
  return s;
}

std::vector<JobTraffic> Jobs(const PodList& pods,
                             const std::vector<std::vector<Traffic>>& series) {
  std::vector<std::shared_ptr<const Snapshot>> window;
  for (size_t i = 0; i < series.size(); ++i) {
    window.push_back(Snap(static_cast<int>(i), pods, series[i]));
  }
  return ComputeJobTraffic(ComputeStats(WindowFromSnapshots(window, "n")));
}

TEST(PsShareFromSnapshots, TableOfWindows) {
  const PodList three_ps = {Pod("w0", Role::kWorker), Pod("w1", Role::kWorker),
                            Pod("ps0", Role::kPs), Pod("ps1", Role::kPs),
                            Pod("ps2", Role::kPs)};
  const PodList one_ps = {Pod("w0", Role::kWorker), Pod("ps0", Role::kPs)};
  // Workers elsewhere: this node only runs the PS.
  const PodList ps_only = {Pod("ps0", Role::kPs), Pod("ps1", Role::kPs),
                           Pod("ps2", Role::kPs)};
  struct Case {
    const char* name;
    PodList pods;
    std::vector<std::vector<Traffic>> series;
    std::map<std::string, double> share;  // empty: undefined (no series)
    std::optional<double> skew;
  };
  const std::vector<Case> cases = {
      {"no bytes at all", three_ps, {{}, {}}, {}, std::nullopt},
      {"no bytes in the window",
       three_ps,
       {{{"w0", "ps0", 500, 500}}, {{"w0", "ps0", 500, 500}}},
       {},
       std::nullopt},
      {"a pair first seen in the last sample has no rate yet",
       one_ps,
       {{}, {{"w0", "ps0", 10, 20}}},
       {},
       std::nullopt},
      {"single PS",
       one_ps,
       {{{"w0", "ps0", 0, 0}}, {{"w0", "ps0", 10, 20}}},
       {{"ps0", 1.0}},
       1.0},
      {"tie",
       three_ps,
       {{{"w0", "ps0", 0, 0}, {"w0", "ps1", 0, 0}, {"w1", "ps2", 0, 0}},
        {{"w0", "ps0", 50, 50}, {"w0", "ps1", 50, 50}, {"w1", "ps2", 0, 100}}},
       {{"ps0", 1 / 3.0}, {"ps1", 1 / 3.0}, {"ps2", 1 / 3.0}},
       1.0},
      {"hot PS; idle PS still listed",
       three_ps,
       {{{"w0", "ps0", 0, 0}, {"w1", "ps0", 0, 0}, {"w0", "ps1", 0, 0}},
        {{"w0", "ps0", 700, 100},
         {"w1", "ps0", 0, 100},
         {"w0", "ps1", 0, 100}}},
       {{"ps0", 0.9}, {"ps1", 0.1}, {"ps2", 0.0}},
       2.7},
      {"window counts the increase only",
       three_ps,
       {{{"w0", "ps0", 1000, 1000}, {"w0", "ps1", 0, 0}},
        {{"w0", "ps0", 1100, 1000}, {"w0", "ps1", 100, 0}}},
       {{"ps0", 0.5}, {"ps1", 0.5}, {"ps2", 0.0}},
       1.5},
      {"both sides on this node count once (the workers' side)",
       one_ps,
       {{{"w0", "ps0", 0, 0}, {"ps0", "w0", 0, 0}},
        {{"w0", "ps0", 60, 40}, {"ps0", "w0", 40, 60}}},
       {{"ps0", 1.0}},
       1.0},
      {"PS-side view only (workers elsewhere)",
       ps_only,
       {{{"ps0", "w0", 0, 0}, {"ps1", "w1", 0, 0}},
        {{"ps0", "w0", 30, 30}, {"ps1", "w1", 20, 40}}},
       {{"ps0", 0.5}, {"ps1", 0.5}, {"ps2", 0.0}},
       1.5},
      {"unknown peers and PS-PS traffic ignored",
       three_ps,
       {{{"w0", "", 0, 0}, {"ps0", "ps1", 0, 0}, {"w0", "ps2", 0, 0}},
        {{"w0", "", 999, 999}, {"ps0", "ps1", 999, 999}, {"w0", "ps2", 1, 1}}},
       {{"ps0", 0.0}, {"ps1", 0.0}, {"ps2", 1.0}},
       3.0},
      // The interval in which a counter went down counts neither bytes nor
      // time: never a negative or inflated rate.
      {"counter reset",
       three_ps,
       {{{"w0", "ps0", 5000, 5000}, {"w0", "ps1", 0, 0}},
        {{"w0", "ps0", 50, 50}, {"w0", "ps1", 100, 0}},
        {{"w0", "ps0", 100, 100}, {"w0", "ps1", 200, 0}}},
       {{"ps0", 0.5}, {"ps1", 0.5}, {"ps2", 0.0}},
       1.5},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    auto jobs = Jobs(c.pods, c.series);
    ASSERT_EQ(jobs.size(), 1u);
    EXPECT_EQ(jobs[0].training_job, "ctr");
    EXPECT_EQ(jobs[0].namespace_name, "training");
    const std::optional<double> skew = PsTrafficSkew(jobs[0]);
    ASSERT_EQ(skew.has_value(), c.skew.has_value());
    if (!c.skew) continue;
    EXPECT_NEAR(*skew, *c.skew, 1e-9);
    std::map<std::string, double> got;
    for (const auto& t : jobs[0].ps_traffic) got[t.pod] = t.share;
    ASSERT_EQ(got.size(), c.share.size());
    for (const auto& [pod, want] : c.share) {
      EXPECT_NEAR(got.at(pod), want, 1e-9) << pod;
    }
  }
}

TEST(PsShareFromSnapshots, JobsAreSeparateAndNeedTwoSnapshots) {
  const PodList pods = {
      Pod("w0", Role::kWorker, "a"), Pod("ps0", Role::kPs, "a"),
      Pod("w1", Role::kChief, "b"), Pod("ps1", Role::kPs, "b"),
      Pod("ev", Role::kEvaluator, "b")};
  const std::vector<Traffic> zero = {{"w0", "ps0", 0, 0},
                                     {"w1", "ps1", 0, 0},
                                     {"ev", "ps1", 0, 0},
                                     {"w0", "ps1", 0, 0}};
  const std::vector<Traffic> last = {{"w0", "ps0", 10, 0},
                                     {"w1", "ps1", 10, 0},
                                     {"ev", "ps1", 1000, 0},
                                     // a worker of job a talking to b's PS
                                     {"w0", "ps1", 1000, 0}};
  for (const auto& job : Jobs(pods, {last})) {
    EXPECT_FALSE(PsTrafficSkew(job).has_value()) << job.training_job;
  }
  auto jobs = Jobs(pods, {zero, last});
  ASSERT_EQ(jobs.size(), 2u);
  EXPECT_EQ(jobs[0].training_job, "a");
  ASSERT_EQ(jobs[0].ps_traffic.size(), 1u);
  EXPECT_EQ(jobs[0].ps_traffic[0].pod, "ps0");
  EXPECT_NEAR(jobs[0].ps_traffic[0].bytes_per_second, 10 / 5.0, 1e-9);
  EXPECT_EQ(jobs[1].training_job, "b");
  ASSERT_EQ(jobs[1].ps_traffic.size(), 1u);
  // A chief without workers counts, the evaluator does not.
  EXPECT_NEAR(jobs[1].ps_traffic[0].bytes_per_second, 10 / 5.0, 1e-9);
}

}  // namespace
}  // namespace trainscope::diagnosis
