#include "whatif.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "run_results.h"

namespace trainsim {
namespace {

using nlohmann::json;

Scenario Straggler() {
  return ParseScenarioText(R"({"name": "straggler", "duration_s": 90,
    "jobs": [{"namespace": "training", "name": "rank", "ps": 1, "workers": 2,
              "step_ms": 500}],
    "faults": [{"kind": "cpu_limit", "pod": "rank-worker-1", "cores": 0.03,
                "start_s": 20}],
    "expect": [{"kind": "straggler_worker", "pod": "rank-worker-1"}]})");
}

json Diagnosis(const std::string& kind, const std::string& pod,
               const std::string& severity, double speedup, double cost) {
  return {
      {"kind", kind},
      {"pod", pod},
      {"severity", severity},
      {"evidence", {{"expected_speedup", speedup}, {"cost_fraction", cost}}}};
}

// A straggler run as the supervisor sees it: worker-1 drops from 2 to 0.5
// steps/s at 20 s; the agent predicts a speed-up of `predicted` (3.0 at
// first, before the last minute).
json StragglerResults(const Scenario& s, double predicted) {
  StepRateTracker rates(s);
  DiagnosisLog log;
  for (int t = 2; t <= 90; t += 2) {
    const uint64_t healthy = 2 * t;
    const uint64_t slow = t <= 20 ? 2 * t : 40 + (t - 20) / 2;
    rates.ObserveTruth("rank-worker-0", t, healthy, t);
    rates.ObserveTruth("rank-worker-1", t, slow, t);
    json report = {{"jobs", json::array()}, {"diagnoses", json::array()}};
    report["jobs"].push_back(
        {{"namespace", "training"},
         {"training_job", "rank"},
         {"worker_steps_per_second",
          {{"rank-worker-0", 2.0}, {"rank-worker-1", t > 20 ? 0.5 : 2.0}}}});
    if (t > 20)
      report["diagnoses"].push_back(Diagnosis("straggler_worker",
                                              "rank-worker-1", "warning",
                                              t < 30 ? 3.0 : predicted, 0.375));
    log.Observe(report, t);
    rates.ObserveAgent(report, t);
  }
  return json::parse(
      RunResultsJson(s, rates, log, {{"scenario", s.name}, {"passed", true}})
          .dump());
}

TEST(RunResultsTest, WorkersJobsAndDiagnoses) {
  Scenario s = Straggler();
  json r = StragglerResults(s, 1.6);
  EXPECT_EQ(r["scenario"], "straggler");
  EXPECT_EQ(r["passed"], true);
  EXPECT_EQ(r["spans"]["last_minute_s"], json::parse("[30.0, 90.0]"));
  EXPECT_EQ(r["spans"]["before_faults_s"], json::parse("[5.0, 20.0]"));
  EXPECT_EQ(r["pods"]["rank-ps-0"]["training_job"], "rank");
  EXPECT_EQ(r["pods"]["rank-ps-0"]["role"], "ps");
  ASSERT_EQ(r["workers"].size(), 2u);
  EXPECT_EQ(r["workers"][1]["pod"], "rank-worker-1");
  EXPECT_EQ(r["workers"][1]["true_steps_per_second"], 0.5);
  EXPECT_EQ(r["workers"][1]["agent_steps_per_second"], 0.5);
  EXPECT_EQ(r["workers"][1]["error_pct"], 0.0);
  ASSERT_EQ(r["jobs"].size(), 1u);
  EXPECT_EQ(r["jobs"][0]["true_steps_per_second"], 2.5);
  EXPECT_EQ(r["jobs"][0]["true_steps_per_second_before_faults"], 4.0);
  EXPECT_EQ(r["jobs"][0]["agent_steps_per_second"], nullptr);  // not reported
  ASSERT_EQ(r["diagnoses"].size(), 1u);
  const json& d = r["diagnoses"][0];
  EXPECT_EQ(d["kind"], "straggler_worker");
  EXPECT_EQ(d["severity"], "warning");
  EXPECT_EQ(d["last_seen_s"], 90.0);
  // The median of the last minute, not the first noisy figures.
  EXPECT_EQ(d["expected_speedup"], 1.6);
  EXPECT_EQ(d["cost_fraction"], 0.375);
  EXPECT_EQ(d["last"]["evidence"]["cost_fraction"], 0.375);
  EXPECT_EQ(r["verify"]["passed"], true);
}

TEST(WhatIfTest, BeforeTheFaultAgainstTheLastMinute) {
  Scenario s = Straggler();
  // Measured: 4.0 / 2.5 = 1.6.
  for (const auto& [predicted, passes] :
       std::vector<std::pair<double, bool>>{{1.6, true},
                                            {1.9, true},
                                            {2.05, false},
                                            {1.25, true},
                                            {1.1, false}}) {
    const json r = StragglerResults(s, predicted);
    WhatIfResult w =
        CompareWhatIf(r, nullptr, "straggler_worker", "rank-worker-1", 0.25);
    EXPECT_EQ(w.job, "training/rank");
    EXPECT_NEAR(w.predicted, predicted, 1e-9);
    EXPECT_NEAR(w.measured, 1.6, 1e-9);
    EXPECT_EQ(w.passed, passes) << predicted;
    EXPECT_NE(w.measured_as.find("before the fault"), std::string::npos);
  }
}

json HotPsResults(const std::string& scenario, double job_rate,
                  std::optional<double> speedup) {
  json r = {{"scenario", scenario},
            {"pods",
             {{"ctr-ps-0",
               {{"namespace", "training"},
                {"training_job", "ctr"},
                {"role", "ps"}}}}},
            {"jobs", json::array()},
            {"diagnoses", json::array()}};
  r["jobs"].push_back({{"namespace", "training"},
                       {"training_job", "ctr"},
                       {"true_steps_per_second", job_rate},
                       {"true_steps_per_second_before_faults", nullptr}});
  if (speedup)
    r["diagnoses"].push_back({{"kind", "hot_parameter_server"},
                              {"pod", "ctr-ps-0"},
                              {"expected_speedup", *speedup}});
  return r;
}

TEST(WhatIfTest, AgainstTheFixedRun) {
  const json slow = HotPsResults("hot-ps-embedding", 2.0, 3.1);
  const json fixed = HotPsResults("hot-ps-partitioned", 7.0, std::nullopt);
  WhatIfResult w =
      CompareWhatIf(slow, &fixed, "hot_parameter_server", "ctr-ps-0", 0.25);
  EXPECT_NEAR(w.measured, 3.5, 1e-9);
  EXPECT_NEAR(w.error, (3.1 - 3.5) / 3.5, 1e-9);
  EXPECT_TRUE(w.passed);
  EXPECT_NE(w.measured_as.find("hot-ps-partitioned"), std::string::npos);
  const json faster = HotPsResults("hot-ps-partitioned", 9.0, std::nullopt);
  EXPECT_FALSE(
      CompareWhatIf(slow, &faster, "hot_parameter_server", "ctr-ps-0", 0.25)
          .passed);
}

TEST(WhatIfTest, MissingDataNamed) {
  const json slow = HotPsResults("hot-ps-embedding", 2.0, std::nullopt);
  const json fixed = HotPsResults("hot-ps-partitioned", 7.0, std::nullopt);
  auto why = [](const json& a, const json* b, const std::string& pod) {
    try {
      CompareWhatIf(a, b, "hot_parameter_server", pod, 0.25);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(why(slow, &fixed, "ctr-ps-0").find("with an expected_speedup"),
            std::string::npos);
  EXPECT_NE(why(slow, &fixed, "ctr-ps-9").find("no pod ctr-ps-9"),
            std::string::npos);
  const json with = HotPsResults("hot-ps-embedding", 2.0, 3.0);
  // No fault in the run: no before-fault figure to compare with.
  EXPECT_NE(why(with, nullptr, "ctr-ps-0").find("before the first fault"),
            std::string::npos);
  json other = fixed;
  other["jobs"][0]["training_job"] = "other";
  EXPECT_NE(why(with, &other, "ctr-ps-0").find("no job training/ctr"),
            std::string::npos);
}

// Results of one scaling run, as `verify --results` writes them (the
// fields CompareScaling reads).
json ScalingRun(const std::string& name, double true_rate,
                std::optional<double> forecast) {
  json evidence = json::object();
  if (forecast)
    evidence["headroom"] = {{"workers", 4},
                            {"max_workers", 9.2},
                            {"max_steps_per_second", *forecast}};
  return {
      {"scenario", name},
      {"pods",
       {{"ctr-ps-0", {{"namespace", "training"}, {"training_job", "ctr"}}}}},
      {"jobs",
       {{{"namespace", "training"},
         {"training_job", "ctr"},
         {"true_steps_per_second", true_rate}}}},
      {"diagnoses",
       {{{"kind", "hot_parameter_server"},
         {"pod", "ctr-ps-0"},
         {"last", {{"evidence", evidence}}}}}}};
}

TEST(ScalingTest, ForecastAgainstThePlateauOfTheLargerRuns) {
  const json four = ScalingRun("w4", 13.6, 31.4);
  const std::vector<json> more = {ScalingRun("w8", 27.3, std::nullopt),
                                  ScalingRun("w12", 31.1, std::nullopt)};
  ScalingResult r =
      CompareScaling(four, more, "hot_parameter_server", "ctr-ps-0", 0.25);
  EXPECT_TRUE(r.passed);
  EXPECT_EQ(r.plateau_run, "w12");
  EXPECT_NEAR(r.plateau, 31.1, 1e-9);
  EXPECT_NEAR(r.error, 31.4 / 31.1 - 1, 1e-9);
  EXPECT_EQ(r.workers, 4u);
  // A forecast the larger runs never approach: they kept scaling.
  r = CompareScaling(ScalingRun("w4", 13.6, 60), more, "hot_parameter_server",
                     "ctr-ps-0", 0.25);
  EXPECT_FALSE(r.passed);
  // A job that outgrew its forecast by far.
  r = CompareScaling(ScalingRun("w4", 13.6, 20), more, "hot_parameter_server",
                     "ctr-ps-0", 0.25);
  EXPECT_FALSE(r.passed);
}

TEST(ScalingTest, WithoutAForecastItSaysWhatIsMissing) {
  try {
    CompareScaling(ScalingRun("w4", 13.6, std::nullopt), {},
                   "hot_parameter_server", "ctr-ps-0", 0.25);
    FAIL() << "compared without a forecast";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("headroom.max_steps_per_second"),
              std::string::npos);
  }
}

TEST(RunResultsTest, WrittenAtomically) {
  const std::string dir = ::testing::TempDir() + "/trainsim-results";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  WriteJsonFile(dir + "/r.json", nlohmann::ordered_json{{"a", 1}});
  std::ifstream in(dir + "/r.json");
  EXPECT_EQ(json::parse(in), json::parse(R"({"a": 1})"));
  EXPECT_FALSE(std::filesystem::exists(dir + "/r.json.tmp"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace trainsim
