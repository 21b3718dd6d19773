#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "detector_cases.h"
#include "diagnosis/detectors.h"

namespace trainscope::diagnosis {
namespace {

using testing::FindingsOf;
using testing::PsJob;
using testing::WindowBuilder;

// The window's instants are 0, 5 and 10 s; "now" is 10.
constexpr double kNow = 10;

struct RestartState {
  std::optional<double> restarts;         // the counter at every point
  std::optional<double> restarts_at_end;  // the counter's last value
  std::optional<double> exited_s_ago;     // lastState.terminated
  std::optional<double> running_again_s_ago;
  bool crash_looping = false;
  std::string reason = "Error";
  int exit_code = 1;
};

void SetRestartState(WindowBuilder& b, const RestartState& s) {
  auto& points = b.Timeline().points;
  for (auto& p : points) p.restarts = s.restarts;
  if (s.restarts_at_end) points.back().restarts = s.restarts_at_end;
  if (s.crash_looping) points.back().crash_looping = 1.0;
  PodMeta& meta = b.Meta();
  if (s.exited_s_ago) {
    meta.last_termination =
        ContainerTermination{s.reason, s.exit_code, 0, kNow - *s.exited_s_ago};
    meta.last_terminated_container = "trainer";
  }
  if (s.running_again_s_ago)
    meta.running_since_s = kNow - *s.running_again_s_ago;
}

// An allreduce job of three ranks, rank `pod` in the given state.
Window AllreduceWith(const std::string& pod, const RestartState& s,
                     Role role = Role::kWorker) {
  WindowBuilder b;
  for (const char* name : {"rank-0", "rank-1", "rank-2"}) {
    b.Pod(name, name == pod ? role : Role::kWorker, "ring");
    b.Gauge(&PodPoint::restarts, 0);
    if (name == pod) SetRestartState(b, s);
  }
  return b.Build();
}

struct RestartCase {
  const char* name;
  RestartState state;
  Role role = Role::kWorker;
  std::optional<Severity> want;  // empty: no finding
};

TEST(PodRestartingTest, NamesARecentRestartAndACrashLoop) {
  const RestartCase cases[] = {
      {"exited 30 s ago, running again for 20 s",
       {1, std::nullopt, 30, 20},
       Role::kWorker,
       Severity::kWarning},
      {"in CrashLoopBackOff",
       {4, std::nullopt, 20, std::nullopt, true},
       Role::kWorker,
       Severity::kCritical},
      {"restarted between two samples, the API's exit not seen yet",
       {3, 4},
       Role::kWorker,
       Severity::kWarning},
      {"its last exit 11 minutes ago: over",
       {1, std::nullopt, 660, 650},
       Role::kWorker,
       std::nullopt},
      {"never restarted", {0}, Role::kWorker, std::nullopt},
      {"no status known (pod file, cgroup scan)",
       {},
       Role::kWorker,
       std::nullopt},
      {"a pod that is not a training pod",
       {1, std::nullopt, 30, 20},
       Role::kUnknown,
       std::nullopt},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const auto found =
        FindingsOf(kPodRestarting, AllreduceWith("rank-1", c.state, c.role));
    if (!c.want) {
      EXPECT_TRUE(found.empty());
      continue;
    }
    ASSERT_EQ(found.size(), 1u);
    EXPECT_EQ(found[0].diagnosis.pod, "rank-1");
    EXPECT_EQ(found[0].diagnosis.severity, *c.want);
    EXPECT_EQ(found[0].level, Finding::Level::kEvent);
  }
}

TEST(PodRestartingTest, EvidenceSaysHowItEndedAndWhatItCost) {
  RestartState s{2, std::nullopt, 60, 30};
  s.reason = "OOMKilled";
  s.exit_code = 137;
  const auto found = FindingsOf(kPodRestarting, AllreduceWith("rank-1", s));
  ASSERT_EQ(found.size(), 1u);
  const auto& d = found[0].diagnosis;
  EXPECT_EQ(d.evidence["reason"], "OOMKilled");
  EXPECT_EQ(d.evidence["exit_code"], 137);
  EXPECT_EQ(d.evidence["container"], "trainer");
  EXPECT_DOUBLE_EQ(d.evidence["down_seconds"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(d.evidence["seconds_since_exit"].get<double>(), 60);
  // An allreduce rank holds every step: 30 s of 600 s is the job's cost.
  EXPECT_NEAR(d.evidence["cost_fraction"].get<double>(), 0.05, 1e-6);
  EXPECT_NE(d.summary.find("OOMKilled"), std::string::npos) << d.summary;
  ASSERT_FALSE(d.recommendations.empty());
  EXPECT_NE(d.recommendations[0].find("memory limit"), std::string::npos);
}

TEST(PodRestartingTest, TheRecommendationFollowsTheExit) {
  const std::pair<int, const char*> cases[] = {{137, "SIGKILL"},
                                               {143, "SIGTERM"},
                                               {139, "native code"},
                                               {2, "exited with code 2"}};
  for (const auto& [code, want] : cases) {
    SCOPED_TRACE(code);
    RestartState s{1, std::nullopt, 30, 20};
    s.exit_code = code;
    const auto found = FindingsOf(kPodRestarting, AllreduceWith("rank-1", s));
    ASSERT_EQ(found.size(), 1u);
    EXPECT_NE(found[0].diagnosis.recommendations[0].find(want),
              std::string::npos)
        << found[0].diagnosis.recommendations[0];
  }
}

TEST(PodRestartingTest, AnAsynchronousWorkerCostsItsShareAPsTheWholeJob) {
  // 2 PS, 4 workers; one of them, then one PS, down 60 s of the last 600.
  auto cost_of = [](const std::string& pod) {
    WindowBuilder b;
    PsJob(b, {1e6, 1e6}, 4);
    Window w = b.Build();
    auto& t = w.pods[PodKey("training", pod)];
    for (auto& p : t.points) p.restarts = 1;
    t.meta.last_termination = ContainerTermination{"Error", 1, 0, kNow - 90};
    t.meta.running_since_s = kNow - 30;
    const auto found = FindingsOf(kPodRestarting, w);
    EXPECT_EQ(found.size(), 1u);
    return found.empty()
               ? -1.0
               : found[0].diagnosis.evidence["cost_fraction"].get<double>();
  };
  EXPECT_NEAR(cost_of("ctr-ps-1"), 0.1, 1e-6);
  EXPECT_NEAR(cost_of("ctr-worker-2"), 0.1 / 4, 1e-6);
}

}  // namespace
}  // namespace trainscope::diagnosis
