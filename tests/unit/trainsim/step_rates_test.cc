#include "step_rates.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

namespace trainsim {
namespace {

using nlohmann::json;

Scenario Jobs(const std::string& extra = "") {
  return ParseScenarioText(R"({"name": "s", "duration_s": 90,
    "jobs": [{"namespace": "training", "name": "fast", "ps": 1, "workers": 2,
              "step_ms": 100, "chief": 1},
             {"namespace": "training", "name": "slow", "ps": 1, "workers": 1,
              "step_ms": 5000}])" +
                           extra + "}");
}

// Step completions at a fixed period from `start`, each shifted by up to
// +-jitter of the period.
std::vector<double> Steps(double start, double period, double until,
                          double jitter = 0, unsigned seed = 1) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> d(-jitter, jitter);
  std::vector<double> out;
  for (double t = start + period; t < until; t += period)
    out.push_back(t + d(rng) * period);
  std::sort(out.begin(), out.end());
  return out;
}

// What the supervisor reads at a poll at `t`: the stats file as last
// written (once a second, on the whole second), so the count lags.
void Feed(StepRateTracker& tr, const std::string& pod,
          const std::vector<double>& steps, double t) {
  const double written = std::floor(t);
  uint64_t n = 0;
  std::optional<double> last;
  for (double s : steps)
    if (s <= written) {
      ++n;
      last = s;
    }
  tr.ObserveTruth(pod, t, n, last);
}

json Report(const std::map<std::string, double>& rates) {
  json jobs = json::array();
  json per = json::object();
  for (const auto& [pod, r] : rates) per[pod] = r;
  double total = 0;
  for (const auto& [pod, r] : rates) total += r;
  jobs.push_back({{"namespace", "training"},
                  {"training_job", "fast"},
                  {"steps_per_second", total},
                  {"worker_steps_per_second", per}});
  return {{"diagnoses", json::array()}, {"jobs", jobs}};
}

const StepRateTracker::WorkerFigures& Find(
    const std::vector<StepRateTracker::WorkerFigures>& ws,
    const std::string& pod) {
  for (const auto& w : ws)
    if (w.pod == pod) return w;
  throw std::runtime_error("no " + pod);
}

TEST(StepRatesTest, ChecksTheTrainingPods) {
  Scenario s = ParseScenarioText(R"({"name": "s",
    "jobs": [{"name": "a", "ps": 1, "workers": 2, "chief": 1, "evaluator": 1},
             {"name": "r", "kind": "allreduce", "workers": 2, "chief": 1,
              "gradient_bytes": 1000},
             {"name": "p", "ps": 1, "workers": 1,
              "program": {"argv": ["/bin/true"]}},
             {"name": "ddp", "kind": "allreduce", "workers": 1, "chief": 1,
              "program": {"argv": ["/bin/true"]}},
             {"name": "tf2", "ps": 1, "workers": 2, "chief": 1,
              "program": {"argv": ["/bin/true"]}}]})");
  StepRateTracker tr(s);
  // Built-in chiefs, masters and evaluators do not train; a real
  // PyTorchJob's master is rank 0 of its ring.
  EXPECT_EQ(tr.checked(),
            (std::vector<std::string>{"a-worker-0", "a-worker-1", "r-worker-0",
                                      "r-worker-1", "p-worker-0",
                                      "ddp-master-0", "ddp-worker-0"}));
  // TF2's coordinator counts its job's steps; its workers count none.
  EXPECT_EQ(tr.checked_jobs(), (std::vector<std::string>{"default/tf2"}));
}

// A TF2 job: the coordinator schedules 10 steps a second over two workers
// and counts them; the workers' own counts stay 0. The agent's job total
// is checked against the coordinator's count, the workers not at all.
TEST(StepRatesTest, ACoordinatorCountedJobIsCheckedAsAWhole) {
  Scenario s = ParseScenarioText(R"({"name": "s", "duration_s": 90,
    "jobs": [{"namespace": "training", "name": "tf2", "ps": 1, "workers": 2,
              "chief": 1, "program": {"argv": ["/bin/true"]}}]})");
  auto agent_total = [](double total) {
    return json{{"jobs", json::array({{{"namespace", "training"},
                                       {"training_job", "tf2"},
                                       {"steps_per_second", total},
                                       {"worker_steps_per_second",
                                        {{"tf2-worker-0", total / 2},
                                         {"tf2-worker-1", total / 2}}}}})}};
  };
  for (double agent : {10.4, 12.0}) {
    StepRateTracker tr(s);
    const auto steps = Steps(0, 0.1, 90);
    for (double t = 3; t <= 90; t += 3) {
      Feed(tr, "tf2-chief-0", steps, t);
      tr.ObserveTruth("tf2-worker-0", t, 0, std::nullopt);
      tr.ObserveAgent(agent_total(agent), t);
    }
    EXPECT_TRUE(tr.Workers().empty());
    const auto jobs = tr.Jobs();
    ASSERT_EQ(jobs.size(), 1u);
    ASSERT_TRUE(jobs[0].check.checked);
    ASSERT_TRUE(jobs[0].check.true_rate.has_value());
    EXPECT_NEAR(*jobs[0].check.true_rate, 10, 0.01);
    EXPECT_EQ(tr.Passed(), agent < 11) << agent;
    EXPECT_EQ(tr.ResultJson()["jobs"][0]["passed"], agent < 11);
    EXPECT_NE(tr.Table().find("tf2 (job, coordinator)"), std::string::npos);
  }
}

// A job spread over two nodes: each node's agent totals its own workers,
// and the job's total is their sum at each poll (cluster-uplink-saturated
// recorded one node's half before).
TEST(StepRatesTest, AClustersJobTotalAddsItsNodesReports) {
  Scenario s = ParseScenarioText(R"({"name": "s", "duration_s": 60,
    "jobs": [{"namespace": "training", "name": "fast", "ps": 1,
              "workers": 2}]})");
  StepRateTracker tr(s);
  const auto steps = Steps(0, 0.5, 60);
  for (double t = 2; t <= 60; t += 2) {
    Feed(tr, "fast-worker-0", steps, t);
    Feed(tr, "fast-worker-1", steps, t);
    tr.ObserveAgent(Report({{"fast-worker-0", 2.0}}), t);
    tr.ObserveAgent(Report({{"fast-worker-1", 2.1}}), t);
  }
  const auto jobs = tr.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  ASSERT_TRUE(jobs[0].agent_last_minute.has_value());
  EXPECT_NEAR(*jobs[0].agent_last_minute, 4.1, 1e-9);
  ASSERT_TRUE(jobs[0].last_minute.has_value());
  EXPECT_NEAR(*jobs[0].last_minute, 4.0, 0.1);
}

// At 5 s steps and 2 s polls, a count per poll interval is 0 or 1 step:
// the stamped completions give the exact period anyway, at both ends of
// the range of step times (100 ms and 5 s) and at 2 s and 5 s polls.
TEST(StepRatesTest, ExactRatesFromStampedSteps) {
  for (double poll : {2.0, 5.0}) {
    Scenario s = Jobs();
    StepRateTracker tr(s);
    const auto fast = Steps(0.3, 0.1, 95), slow = Steps(1.7, 5.0, 95);
    for (double t = poll; t <= 90; t += poll) {
      Feed(tr, "fast-worker-0", fast, t);
      Feed(tr, "fast-worker-1", fast, t);
      Feed(tr, "slow-worker-0", slow, t);
      tr.ObserveAgent(Report({{"fast-worker-0", 10.4},
                              {"fast-worker-1", 9.3},
                              {"slow-worker-0", 0.19}}),
                      t);
    }
    const auto ws = tr.Workers();
    ASSERT_EQ(ws.size(), 3u);
    EXPECT_NEAR(*Find(ws, "fast-worker-0").true_rate, 10, 1e-6) << poll;
    EXPECT_NEAR(*Find(ws, "slow-worker-0").true_rate, 0.2, 1e-9) << poll;
    EXPECT_NEAR(*Find(ws, "fast-worker-0").error, 0.04, 1e-6);
    EXPECT_NEAR(*Find(ws, "fast-worker-1").error, -0.07, 1e-6);
    EXPECT_NEAR(*Find(ws, "slow-worker-0").error, -0.05, 1e-6);
    EXPECT_TRUE(tr.Passed()) << tr.Table();
    const auto jobs = tr.Jobs();
    ASSERT_EQ(jobs.size(), 2u);
    EXPECT_EQ(jobs[0].job, "fast");
    EXPECT_NEAR(*jobs[0].last_minute, 20, 1e-6);
    EXPECT_FALSE(jobs[0].before_faults);  // no faults
    // The agent's job total, as reported (the fixture puts every worker
    // under job fast).
    EXPECT_NEAR(*jobs[0].agent_last_minute, 10.4 + 9.3 + 0.19, 1e-9);
    EXPECT_FALSE(jobs[1].agent_last_minute);
  }
}

TEST(StepRatesTest, JitterMovesTheMedianLittle) {
  Scenario s = Jobs();
  StepRateTracker tr(s);
  const auto steps = Steps(0, 0.5, 95, /*jitter=*/0.3, 7);
  for (double t = 2; t <= 90; t += 2) {
    Feed(tr, "fast-worker-0", steps, t);
    tr.ObserveAgent(Report({{"fast-worker-0", 2.0}}), t);
  }
  const auto w = Find(tr.Workers(), "fast-worker-0");
  EXPECT_NEAR(*w.true_rate, 2.0, 0.04);
  EXPECT_TRUE(w.passed) << w.why;
}

TEST(StepRatesTest, FailsOffMissingOrSparseEstimates) {
  Scenario s = Jobs();
  StepRateTracker tr(s);
  const auto fast = Steps(0, 0.1, 95), slow = Steps(0, 5.0, 95);
  int poll = 0;
  for (double t = 5; t <= 90; t += 5, ++poll) {
    Feed(tr, "fast-worker-0", fast, t);
    Feed(tr, "fast-worker-1", fast, t);
    Feed(tr, "slow-worker-0", slow, t);
    // worker-0 15% high; worker-1 only in a third of the polls; slow none.
    std::map<std::string, double> r = {{"fast-worker-0", 11.5}};
    if (poll % 3 == 0) r["fast-worker-1"] = 10;
    tr.ObserveAgent(Report(r), t);
  }
  EXPECT_FALSE(tr.Passed());
  const auto ws = tr.Workers();
  EXPECT_EQ(Find(ws, "fast-worker-0").why, "off by +15.0%");
  EXPECT_FALSE(Find(ws, "fast-worker-1").agent_rate);
  EXPECT_NE(Find(ws, "fast-worker-1").why.find("no estimate (in 3"),
            std::string::npos)
      << Find(ws, "fast-worker-1").why;
  EXPECT_EQ(Find(ws, "slow-worker-0").why, "no estimate (in 0% of the polls)");

  json r = json::parse(tr.ResultJson().dump());
  EXPECT_EQ(r["checked"], true);
  EXPECT_EQ(r["passed"], false);
  ASSERT_EQ(r["workers"].size(), 3u);
  EXPECT_EQ(r["workers"][0]["pod"], "fast-worker-0");
  EXPECT_EQ(r["workers"][0]["true_steps_per_second"], 10.0);
  EXPECT_EQ(r["workers"][0]["agent_steps_per_second"], 11.5);
  EXPECT_EQ(r["workers"][0]["error_pct"], 15.0);
  EXPECT_EQ(r["workers"][2]["agent_steps_per_second"], nullptr);
  const std::string table = tr.Table();
  EXPECT_NE(table.find("FAIL: off by +15.0%"), std::string::npos) << table;
  EXPECT_NE(table.find("slow-worker-0"), std::string::npos);
}

// The agent's first estimates (before it saw a few steps) do not count, and
// a median forgives a minority of bad polls.
TEST(StepRatesTest, EarlyAndOutlyingEstimatesForgiven) {
  Scenario s = Jobs();
  StepRateTracker tr(s);
  const auto steps = Steps(0, 0.5, 65);
  for (double t = 2; t <= 60; t += 2) {
    Feed(tr, "fast-worker-0", steps, t);
    const double est = t < 10 ? 7.0 : (static_cast<int>(t) % 8 == 0 ? 3 : 2.05);
    tr.ObserveAgent(Report({{"fast-worker-0", est}}), t);
  }
  const auto w = Find(tr.Workers(), "fast-worker-0");
  EXPECT_NEAR(*w.agent_rate, 2.05, 1e-9);
  EXPECT_TRUE(w.passed) << w.why;
}

// straggler.json: one worker drops from 2 to 0.5 steps/s at 20 s. The last
// minute shows the new rate, the stretch before the fault the old one.
TEST(StepRatesTest, RateDropMidRunAndBeforeFaults) {
  Scenario s = ParseScenarioText(R"({"name": "straggler", "duration_s": 90,
    "jobs": [{"name": "rank", "ps": 2, "workers": 2, "step_ms": 500}],
    "faults": [{"kind": "cpu_limit", "pod": "rank-worker-1", "cores": 0.03,
                "start_s": 20}]})");
  StepRateTracker tr(s);
  auto slow = Steps(0, 0.5, 20.2);
  for (double t = slow.back() + 2; t < 95; t += 2) slow.push_back(t);
  const auto healthy = Steps(0.1, 0.5, 95);
  for (double t = 2; t <= 90; t += 2) {
    Feed(tr, "rank-worker-0", healthy, t);
    Feed(tr, "rank-worker-1", slow, t);
    tr.ObserveAgent(
        Report({{"rank-worker-0", 2.0}, {"rank-worker-1", t < 30 ? 1.0 : 0.5}}),
        t);
  }
  const auto ws = tr.Workers();
  EXPECT_NEAR(*Find(ws, "rank-worker-1").true_rate, 0.5, 1e-6);
  EXPECT_TRUE(tr.Passed()) << tr.Table();
  auto span = tr.BeforeFaultsSpan();
  ASSERT_TRUE(span);
  EXPECT_EQ(span->first, StepRateTracker::kTruthWarmupS);
  EXPECT_EQ(span->second, 20);
  const auto jobs = tr.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_NEAR(*jobs[0].before_faults, 4.0, 1e-6);
  EXPECT_NEAR(*jobs[0].last_minute, 2.5, 1e-6);
  EXPECT_EQ(tr.LastSpan(), std::make_pair(30.0, 90.0));
}

TEST(StepRatesTest, NoBeforeFaultsStretchWhenAFaultStartsAtOnce) {
  Scenario s = ParseScenarioText(R"({"name": "s", "duration_s": 60,
    "jobs": [{"name": "j", "ps": 1, "workers": 1}],
    "faults": [{"kind": "cpu_limit", "pod": "j-worker-0", "cores": 0.1},
               {"kind": "cpu_hog", "pod": "j-ps-0", "start_s": 30}]})");
  EXPECT_FALSE(StepRateTracker(s).BeforeFaultsSpan());
}

// A restarted pod counts from 0 again: windows across the restart are
// dropped, not read as a huge negative (or wrapped) rate.
TEST(StepRatesTest, PodRestartDropsTheWindowsAcrossIt) {
  Scenario s = Jobs();
  StepRateTracker tr(s);
  auto before = Steps(0, 0.5, 40), after = Steps(40.3, 0.5, 95);
  for (double t = 2; t <= 90; t += 2) {
    Feed(tr, "fast-worker-0", t < 41 ? before : after, t);
    tr.ObserveAgent(Report({{"fast-worker-0", 2.0}}), t);
  }
  const auto w = Find(tr.Workers(), "fast-worker-0");
  EXPECT_NEAR(*w.true_rate, 2.0, 1e-6);
  EXPECT_TRUE(w.passed);
}

// A worker the crash fault takes down is down part of the last minute: its
// steps are counted, its rate not judged; its peers' still are.
TEST(StepRatesTest, ACrashingWorkerIsCountedNotChecked) {
  Scenario s = Jobs(R"(, "faults": [{"kind": "crash", "pod": "fast-worker-1",
                                     "start_s": 20, "every_s": 15}])");
  StepRateTracker tr(s);
  EXPECT_EQ(tr.checked(),
            (std::vector<std::string>{"fast-worker-0", "slow-worker-0"}));
  const auto steps = Steps(0, 0.5, 95);
  for (double t = 2; t <= 90; t += 2) {
    Feed(tr, "fast-worker-0", steps, t);
    Feed(tr, "fast-worker-1", Steps(0, 1.0, t), t);
    tr.ObserveAgent(Report({{"fast-worker-0", 2.0}, {"fast-worker-1", 2.0}}),
                    t);
  }
  const auto ws = tr.Workers();
  EXPECT_TRUE(Find(ws, "fast-worker-0").checked);
  EXPECT_FALSE(Find(ws, "fast-worker-1").checked);
  EXPECT_TRUE(Find(ws, "fast-worker-1").passed);  // off by +100%, not judged
  EXPECT_NEAR(*Find(ws, "fast-worker-1").true_rate, 1.0, 1e-6);
}

// A hang or checkpoint on any pod of a job (a PS too) stops the job's steps
// for part of the last minute: its workers are counted, not checked; other
// jobs' still are.
TEST(StepRatesTest, AHaltedJobIsCountedNotChecked) {
  for (const char* fault :
       {R"({"kind": "hang", "mode": "sigstop", "pod": "fast-ps-0"})",
        R"({"kind": "checkpoint", "pod": "fast-worker-1", "bytes": 1000})"}) {
    StepRateTracker tr(Jobs(std::string(R"(, "faults": [)") + fault + "]"));
    EXPECT_EQ(tr.checked(), std::vector<std::string>{"slow-worker-0"}) << fault;
  }
}

// A TF2 job whose PS stops: the coordinator's count stops for the rest of
// the run while the agent's rate over its window still holds the steps
// before; the job is counted, not checked (a CI run failed it: truth 0,
// agent 10 steps/s).
TEST(StepRatesTest, AHaltedCoordinatorJobIsCountedNotChecked) {
  Scenario s = ParseScenarioText(R"({"name": "s", "duration_s": 90,
    "jobs": [{"namespace": "training", "name": "tf2", "ps": 1, "workers": 2,
              "chief": 1, "program": {"argv": ["/bin/true"]}}],
    "faults": [{"kind": "hang", "mode": "sigstop", "pod": "tf2-ps-0",
                "start_s": 40}]})");
  StepRateTracker tr(s);
  EXPECT_TRUE(tr.checked_jobs().empty());
  for (double t = 2; t <= 90; t += 2) {
    tr.ObserveTruth("tf2-chief-0", t,
                    static_cast<uint64_t>(std::min(t, 40.0) * 10),
                    std::min(t, 40.0));
    tr.ObserveAgent(json::parse(R"({"jobs": [{"namespace": "training",
        "training_job": "tf2", "steps_per_second": 10,
        "worker_steps_per_second": {}}]})"),
                    t);
  }
  const auto jobs = tr.Jobs();
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_FALSE(jobs.front().check.checked);
  EXPECT_TRUE(tr.Passed());
}

// A worker that made no steps has no period: no estimate is right, and an
// estimate is made up.
TEST(StepRatesTest, IdleWorkerMustHaveNoEstimate) {
  Scenario s = Jobs();
  for (bool estimate : {false, true}) {
    StepRateTracker tr(s);
    for (double t = 2; t <= 90; t += 2) {
      tr.ObserveTruth("fast-worker-0", t, 3, 1.0);
      tr.ObserveAgent(estimate ? Report({{"fast-worker-0", 1.0}}) : Report({}),
                      t);
    }
    const auto w = Find(tr.Workers(), "fast-worker-0");
    EXPECT_EQ(*w.true_rate, 0);
    EXPECT_EQ(w.passed, !estimate) << w.why;
  }
}

TEST(StepRatesTest, SkippedScenarioSaysWhy) {
  Scenario s = Jobs(R"(, "skip_step_rate_check": "no period to see")");
  StepRateTracker tr(s);
  EXPECT_TRUE(tr.checked().empty());
  for (double t = 2; t <= 90; t += 2)
    tr.ObserveTruth("fast-worker-0", t, static_cast<uint64_t>(t * 10), t);
  EXPECT_TRUE(tr.Passed());
  json r = json::parse(tr.ResultJson().dump());
  EXPECT_EQ(r["checked"], false);
  EXPECT_EQ(r["passed"], true);
  EXPECT_EQ(r["skipped"], "no period to see");
  EXPECT_EQ(r["workers"], json::array());
  EXPECT_NE(tr.Table().find("not checked: no period to see"),
            std::string::npos);
}

// Issue 31: where the traffic gives no trustworthy period the agent
// withdraws the rate. That passes only in a scenario that says why it may,
// and what the agent did report there must still be right.
TEST(StepRatesTest, WithdrawnRatePassesOnlyWhereAllowed) {
  struct Case {
    const char* name;
    bool allowed;
    double share;  // of the polls with an estimate
    double rate;   // the estimate given (truth: 2.0)
    bool passes;
  };
  const Case cases[] = {
      {"withdrawn, not allowed", false, 0, 0, false},
      {"withdrawn, allowed", true, 0, 0, true},
      {"rarely given and right, allowed", true, 0.3, 2.1, true},
      {"rarely given and wrong, allowed", true, 0.3, 3.0, false},
      {"given and wrong, allowed", true, 1, 3.0, false},
      {"given and right, allowed", true, 1, 1.9, true},
  };
  const std::vector<double> steps = Steps(0, 0.5, 95);
  for (const Case& c : cases) {
    Scenario s = Jobs(
        c.allowed ? R"(, "step_rates_may_withdraw": "no silence marks a step")"
                  : "");
    StepRateTracker tr(s);
    int poll = 0;
    for (double t = 2; t <= 90; t += 2, ++poll) {
      Feed(tr, "fast-worker-0", steps, t);
      const bool given = (poll % 10) < c.share * 10;
      tr.ObserveAgent(given ? Report({{"fast-worker-0", c.rate}}) : Report({}),
                      t);
    }
    const auto w = Find(tr.Workers(), "fast-worker-0");
    EXPECT_EQ(w.passed, c.passes) << c.name << ": " << w.why;
    EXPECT_EQ(w.withdrawn, c.allowed && c.share < 0.5) << c.name;
  }
}

TEST(StepRatesTest, BadReportsIgnored) {
  Scenario s = Jobs();
  StepRateTracker tr(s);
  tr.ObserveAgent(json("garbage"), 20);
  tr.ObserveAgent(json::parse(R"({"jobs": [1, {"worker_steps_per_second":
      {"fast-worker-0": "x", "stranger": 3, "fast-worker-1": -1}}]})"),
                  24);
  tr.ObserveTruth("fast-worker-0", 24, 100, 23.9);
  EXPECT_FALSE(Find(tr.Workers(), "fast-worker-0").agent_rate);
  EXPECT_FALSE(Find(tr.Workers(), "fast-worker-1").agent_rate);
}

TEST(StepRatesTest, Median) {
  EXPECT_FALSE(Median({}));
  EXPECT_EQ(*Median({3, 1, 2}), 2);
  EXPECT_EQ(*Median({4, 1, 2, 3}), 2.5);
}

}  // namespace
}  // namespace trainsim
