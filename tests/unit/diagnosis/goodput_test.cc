// Goodput per job: each evaluation interval to one state, lost time by
// cause (docs/diagnosis.md, "Goodput and lost time").
#include "diagnosis/goodput.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "exporter/goodput_families.h"
#include "exposition/family_builder.h"

namespace trainscope::diagnosis {
namespace {

using Clock = std::chrono::system_clock;
using std::chrono::seconds;
const Clock::time_point kT0 =
    Clock::time_point{} + std::chrono::hours(24 * 365 * 55);
constexpr auto kMaxStep = seconds(15);  // 3 intervals of 5 s

PodInfo Pod(std::string name, Role role, std::string job = "ctr") {
  PodInfo p;
  p.namespace_name = "training";
  p.name = std::move(name);
  p.training_job = std::move(job);
  p.role = role;
  p.phase = "Running";
  return p;
}

// ctr: 1 PS and 4 workers on this node.
PodList Job() {
  return {Pod("ctr-ps-0", Role::kPs), Pod("ctr-worker-0", Role::kWorker),
          Pod("ctr-worker-1", Role::kWorker),
          Pod("ctr-worker-2", Role::kWorker),
          Pod("ctr-worker-3", Role::kWorker)};
}

Diagnosis Active(std::string_view kind, Severity severity, std::string pod,
                 std::optional<double> cost = std::nullopt) {
  Diagnosis d;
  d.kind = std::string(kind);
  d.severity = severity;
  d.namespace_name = "training";
  d.training_job = "ctr";
  d.pod = std::move(pod);
  if (cost) d.evidence["cost_fraction"] = *cost;
  return d;
}

// One evaluation: its time (seconds from kT0), what is active, which pods.
struct Step {
  double at_s;
  std::vector<Diagnosis> active;
  PodList pods = Job();
};

struct Case {
  std::string name;
  std::vector<Step> steps;
  std::array<double, 3> seconds;  // progress, stalled, restarting
  std::map<std::string, double> lost;
  double goodput;
  bool job_listed = true;
};

GoodputAccounting Replay(const std::vector<Step>& steps) {
  GoodputAccounting acc;
  for (const Step& s : steps)
    acc.Update({.active = s.active,
                .pods = s.pods,
                .peer_pods = nullptr,
                .now = kT0 + std::chrono::duration_cast<Clock::duration>(
                                 std::chrono::duration<double>(s.at_s)),
                .max_step = kMaxStep});
  return acc;
}

const Diagnosis kStalled =
    Active(kTrainingStalled, Severity::kCritical, "");  // whole job
const Diagnosis kRestart =
    Active(kPodRestarting, Severity::kWarning, "ctr-ps-0", 0.2);
const Diagnosis kWorkerRestart =
    Active(kPodRestarting, Severity::kWarning, "ctr-worker-1", 0.05);

// The job with `pod` in back-off (its container waiting).
PodList WithDown(const std::string& pod) {
  PodList pods = Job();
  for (PodInfo& p : pods) {
    ContainerInfo c;
    c.restart_count = p.name == pod ? 3 : 0;
    if (p.name == pod)
      c.waiting_reason = std::string(kCrashLoopBackOff);
    else
      c.running_since_s = 1;
    p.containers.push_back(c);
  }
  return pods;
}

std::vector<Case> Cases() {
  return {
      {.name = "progressing",
       .steps = {{0, {}}, {5, {}}, {10, {}}, {15, {}}},
       .seconds = {15, 0, 0},
       .lost = {},
       .goodput = 1},
      {.name = "stalled_then_progressing",
       .steps = {{0, {}}, {5, {kStalled}}, {10, {kStalled}}, {15, {}}},
       .seconds = {5, 10, 0},
       .lost = {{"training_stalled", 10}},
       .goodput = 5.0 / 15},
      // Stalled comes first: a stalled job whose pod also restarts is
      // stalled, never both.
      {.name = "stalled_wins_over_restarting",
       .steps = {{0, {}}, {5, {kRestart, kStalled}, WithDown("ctr-ps-0")}},
       .seconds = {0, 5, 0},
       .lost = {{"training_stalled", 5}},
       .goodput = 0},
      // A PS down holds every step of its job.
      {.name = "restarting",
       .steps = {{0, {}}, {5, {kRestart}, WithDown("ctr-ps-0")}, {10, {}}},
       .seconds = {5, 0, 5},
       .lost = {{"pod_restarting", 5}},
       .goodput = 0.5},
      // Back up: the diagnosis stays a while, the time lost does not grow
      // (its cost_fraction is the downtime already counted).
      {.name = "restarted_pod_back_up_costs_nothing",
       .steps = {{0, {}}, {5, {kRestart}, WithDown("")}, {10, {kRestart}}},
       .seconds = {10, 0, 0},
       .lost = {},
       .goodput = 1},
      // One asynchronous worker of 4 down: the others go on.
      {.name = "async_worker_down",
       .steps = {{0, {}}, {8, {kWorkerRestart}, WithDown("ctr-worker-1")}},
       .seconds = {8, 0, 0},
       .lost = {{"pod_restarting", 2}},
       .goodput = 0.75},
      {.name = "slowed_by_a_0.3_cost",
       .steps =
           {{0, {}},
            {10, {Active(kCpuThrottled, Severity::kWarning, "ctr-ps-0", 0.3)}}},
       .seconds = {10, 0, 0},
       .lost = {{"cpu_throttled", 3}},
       .goodput = 0.7},
      // 0.8 + 0.6 > 1: scaled down so the interval loses at most itself.
      {.name = "slow_causes_capped_at_the_interval",
       .steps =
           {{0, {}},
            {10,
             {Active(kHotParameterServer, Severity::kCritical, "ctr-ps-0", 0.8),
              Active(kNetworkSaturated, Severity::kWarning, "ctr-ps-0", 0.6)}}},
       .seconds = {10, 0, 0},
       .lost = {{"hot_parameter_server", 10 * 0.8 / 1.4},
                {"network_saturated", 10 * 0.6 / 1.4}},
       .goodput = 0},
      // A diagnosis without a cost costs nothing; another job's costs not
      // this one.
      {.name = "no_cost_and_other_jobs_ignored",
       .steps = {{0, {}},
                 {10,
                  {Active(kGpuUnderutilized, Severity::kWarning,
                          "ctr-worker-0"),
                   [] {
                     Diagnosis d = Active(kCpuThrottled, Severity::kWarning,
                                          "other-ps-0", 0.5);
                     d.training_job = "other";
                     return d;
                   }()}}},
       .seconds = {10, 0, 0},
       .lost = {},
       .goodput = 1},
      // One asynchronous worker of 4 stopped: a quarter of the interval.
      {.name = "async_worker_stall",
       .steps = {{0, {}},
                 {8,
                  {Active(kTrainingStalled, Severity::kWarning,
                          "ctr-worker-2")}}},
       .seconds = {8, 0, 0},
       .lost = {{"training_stalled", 2}},
       .goodput = 0.75},
      // The stopped worker is also a straggler: one problem, counted once.
      {.name = "stalled_worker_counted_once",
       .steps =
           {{0, {}},
            {8,
             {Active(kTrainingStalled, Severity::kWarning, "ctr-worker-2"),
              Active(kStragglerWorker, Severity::kWarning, "ctr-worker-2", 0.3),
              Active(kCpuThrottled, Severity::kWarning, "ctr-ps-0", 0.25)}}},
       .seconds = {8, 0, 0},
       .lost = {{"training_stalled", 2}, {"cpu_throttled", 2}},
       .goodput = 0.5},
      // A paused agent: 100 s between evaluations count as 3 intervals.
      {.name = "pause_capped_at_3_intervals",
       .steps = {{0, {}}, {100, {kStalled}}},
       .seconds = {0, 15, 0},
       .lost = {{"training_stalled", 15}},
       .goodput = 0},
      // The clock steps back: that interval counts nothing; the next one
      // counts from the step.
      {.name = "time_going_backwards_ignored",
       .steps = {{0, {}}, {10, {}}, {4, {kStalled}}, {9, {}}},
       .seconds = {15, 0, 0},
       .lost = {},
       .goodput = 1},
      // Gone from this node: counters freeze; back within 10 min, they go on
      // (the interval it was away is not its time here).
      {.name = "gone_and_back",
       .steps = {{0, {}}, {5, {}}, {10, {}, {}}, {300, {}}, {305, {}}},
       .seconds = {10, 0, 0},
       .lost = {},
       .goodput = 1},
      {.name = "gone_for_10_min_forgotten",
       .steps = {{0, {}}, {5, {}}, {10, {}, {}}, {606, {}, {}}},
       .seconds = {},
       .lost = {},
       .goodput = 1,
       .job_listed = false},
      // Pods that completed do not keep a job's time running.
      {.name = "completed_pods_hold_no_job",
       .steps = {{0, {}},
                 {5, {}},
                 {10,
                  {},
                  [] {
                    PodList pods = Job();
                    for (PodInfo& p : pods) p.phase = "Succeeded";
                    return pods;
                  }()},
                 {15, {}}},
       .seconds = {5, 0, 0},
       .lost = {},
       .goodput = 1},
  };
}

void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class GoodputCase : public ::testing::TestWithParam<Case> {};

TEST_P(GoodputCase, AccountsEachIntervalOnce) {
  const Case& c = GetParam();
  const std::vector<JobGoodput> jobs = Replay(c.steps).Jobs();
  if (!c.job_listed) {
    EXPECT_THAT(jobs, ::testing::IsEmpty());
    return;
  }
  ASSERT_EQ(jobs.size(), 1u);
  const JobGoodput& job = jobs[0];
  EXPECT_EQ(job.namespace_name, "training");
  EXPECT_EQ(job.training_job, "ctr");
  for (size_t i = 0; i < kJobStates.size(); ++i)
    EXPECT_NEAR(job.seconds[i], c.seconds[i], 1e-9)
        << JobStateName(kJobStates[i]);
  ASSERT_EQ(job.lost_seconds.size(), c.lost.size());
  for (const auto& [cause, s] : c.lost) {
    ASSERT_TRUE(job.lost_seconds.contains(cause)) << cause;
    EXPECT_NEAR(job.lost_seconds.at(cause), s, 1e-9) << cause;
  }
  EXPECT_NEAR(job.GoodputRatio(), c.goodput, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Goodput, GoodputCase, ::testing::ValuesIn(Cases()),
                         [](const auto& param_info) {
                           std::string name = param_info.param.name;
                           std::replace(name.begin(), name.end(), '.', '_');
                           return name;
                         });

// N comes from the whole job (the peer pods) when this node holds only some
// of its workers.
TEST(Goodput, AsyncWorkerStallCountsEveryNodesWorkers) {
  PodList here = {Pod("ctr-worker-0", Role::kWorker)};
  PodList everywhere;
  for (int i = 0; i < 10; ++i)
    everywhere.push_back(Pod("ctr-worker-" + std::to_string(i), Role::kWorker));
  const std::vector<Diagnosis> none;
  const std::vector<Diagnosis> stalled = {
      Active(kTrainingStalled, Severity::kWarning, "ctr-worker-0")};
  GoodputAccounting acc;
  acc.Update({none, here, &everywhere, kT0, kMaxStep});
  acc.Update({stalled, here, &everywhere, kT0 + seconds(10), kMaxStep});
  ASSERT_EQ(acc.Jobs().size(), 1u);
  EXPECT_NEAR(acc.Jobs()[0].lost_seconds.at("training_stalled"), 1, 1e-9);
}

TEST(Goodput, TypicalIntervalIgnoresOnePause) {
  std::vector<Clock::time_point> t;
  for (int s : {0, 5, 10, 15, 200, 205}) t.push_back(kT0 + seconds(s));
  EXPECT_EQ(TypicalInterval(t), seconds(5));
  EXPECT_EQ(TypicalInterval({kT0}), Clock::duration::zero());
}

TEST(Goodput, FamiliesNameStatesCausesAndRatio) {
  const GoodputAccounting acc =
      Replay({{0, {}},
              {5, {kStalled}},
              {10, {}},
              {15, {kRestart}, WithDown("ctr-ps-0")}});
  std::vector<prometheus::MetricFamily> families;
  AppendGoodputFamilies(acc.Jobs(), families);
  std::string text;
  AppendTextFormat(families, text);
  using ::testing::HasSubstr;
  const std::string job = R"(training_job="ctr")";
  EXPECT_THAT(text, HasSubstr("# TYPE trainscope_job_seconds_total counter"));
  for (const char* state : {"progress", "stalled", "restarting"})
    EXPECT_THAT(text, HasSubstr(std::string("trainscope_job_seconds_total{"
                                            "namespace=\"training\",state=\"") +
                                state + "\"," + job + "} 5"));
  for (const char* cause : {"pod_restarting", "training_stalled"})
    EXPECT_THAT(text,
                HasSubstr(std::string("trainscope_job_lost_seconds_total{"
                                      "cause=\"") +
                          cause + "\",namespace=\"training\"," + job + "} 5"));
  EXPECT_THAT(text, HasSubstr("# TYPE trainscope_job_goodput_ratio gauge"));
  EXPECT_THAT(text, HasSubstr("trainscope_job_goodput_ratio{namespace="
                              "\"training\"," +
                              job + "} 0.33333333333333"));
}

}  // namespace
}  // namespace trainscope::diagnosis
