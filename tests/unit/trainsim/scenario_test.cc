#include "scenario.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>

namespace trainsim {
namespace {

using nlohmann::json;

// DESIGN.md's example, every field set.
json Example() {
  return json::parse(R"({
    "name": "hot-ps-embedding", "duration_s": 90, "interval_s": 2,
    "jobs": [{
      "namespace": "training", "name": "ctr", "labels": "seed",
      "ps": 4, "workers": 6, "port": 2223, "step_ms": 300, "compute_ms": 50,
      "variables": [{"name": "embedding", "bytes": 3000000},
                    {"name": "dense", "bytes": 100000, "count": 8}],
      "placement": {"strategy": "partitioned", "min_slice_bytes": 1000, "shards": 3},
      "resources": {"ps": {"cpu_limit_cores": 1.0, "memory_limit_bytes": 268435456},
                    "worker": {"cpu_limit_cores": 0.5}}
    }],
    "faults": [{"kind": "cpu_limit", "pod": "ctr-worker-3", "cores": 0.05, "start_s": 5},
               {"kind": "cpu_hog", "pod": "ctr-ps-1", "threads": 2},
               {"kind": "bandwidth_limit", "pod": "ctr-ps-0", "mbit": 100},
               {"kind": "memory_fill", "pod": "ctr-ps-2", "ratio_of_limit": 0.95},
               {"kind": "input_read", "pod": "ctr-worker-0", "bytes_per_step": 1048576, "mbit": 40},
               {"kind": "gpu", "pod": "ctr-worker-1", "utilization": 0.1, "memory_bytes": 1024}],
    "expect": [{"kind": "hot_parameter_server", "pod": "ctr-ps-0"}],
    "allow": [{"kind": "cpu_throttled", "pod": "ctr-worker-3"}]
  })");
}

TEST(ScenarioTest, ParsesEveryField) {
  Scenario s = ParseScenario(Example());
  EXPECT_EQ(s.name, "hot-ps-embedding");
  EXPECT_EQ(s.duration_s, 90);
  EXPECT_EQ(s.interval_s, 2);
  ASSERT_EQ(s.jobs.size(), 1u);
  const Job& j = s.jobs[0];
  EXPECT_EQ(j.namespace_name, "training");
  EXPECT_EQ(j.name, "ctr");
  EXPECT_EQ(j.labels, LabelStyle::kSeed);
  EXPECT_EQ(j.ps, 4);
  EXPECT_EQ(j.workers, 6);
  EXPECT_EQ(j.port, 2223);
  EXPECT_EQ(j.step_ms, 300);
  EXPECT_EQ(j.compute_ms, 50);
  ASSERT_EQ(j.variables.size(), 9u);
  EXPECT_EQ(j.variables[0].name, "embedding");
  EXPECT_EQ(j.variables[0].bytes, 3000000u);
  EXPECT_EQ(j.variables[1].name, "dense_0");
  EXPECT_EQ(j.variables[8].name, "dense_7");
  EXPECT_EQ(j.variables[8].bytes, 100000u);
  EXPECT_EQ(j.placement.strategy, Strategy::kPartitioned);
  EXPECT_EQ(j.placement.min_slice_bytes, 1000u);
  EXPECT_EQ(j.placement.shards, 3);
  EXPECT_EQ(j.ps_resources.cpu_limit_cores, 1.0);
  EXPECT_EQ(j.ps_resources.memory_limit_bytes, 268435456u);
  EXPECT_EQ(j.worker_resources.cpu_limit_cores, 0.5);
  EXPECT_FALSE(j.worker_resources.memory_limit_bytes);

  ASSERT_EQ(s.faults.size(), 6u);
  EXPECT_EQ(s.faults[0].kind, FaultKind::kCpuLimit);
  EXPECT_EQ(s.faults[0].pod, "ctr-worker-3");
  EXPECT_EQ(s.faults[0].cores, 0.05);
  EXPECT_EQ(s.faults[0].start_s, 5);
  EXPECT_EQ(s.faults[1].threads, 2);
  EXPECT_EQ(s.faults[1].start_s, 0);
  EXPECT_EQ(s.faults[2].mbit, 100);
  EXPECT_EQ(s.faults[3].ratio_of_limit, 0.95);
  EXPECT_EQ(s.faults[4].bytes_per_step, 1048576u);
  EXPECT_EQ(s.faults[4].mbit, 40);
  EXPECT_EQ(s.faults[5].utilization, 0.1);
  EXPECT_EQ(s.faults[5].memory_bytes, 1024u);
  EXPECT_EQ(s.expect,
            (std::vector<Expectation>{{"hot_parameter_server", "ctr-ps-0"}}));
  EXPECT_EQ(s.allow,
            (std::vector<Expectation>{{"cpu_throttled", "ctr-worker-3"}}));
}

TEST(ScenarioTest, Defaults) {
  Scenario s =
      ParseScenario(json::parse(R"({"name": "x", "jobs": [{"name": "j"}]})"));
  EXPECT_EQ(s.duration_s, 60);
  EXPECT_EQ(s.interval_s, 5);
  const Job& j = s.jobs[0];
  EXPECT_EQ(j.namespace_name, "default");
  EXPECT_EQ(j.labels, LabelStyle::kKubeflow);
  EXPECT_EQ(j.ps, 1);
  EXPECT_EQ(j.workers, 1);
  EXPECT_EQ(j.port, 2222);
  EXPECT_EQ(j.placement.strategy, Strategy::kRoundRobin);
  EXPECT_EQ(j.placement.min_slice_bytes, 262144u);
  EXPECT_EQ(j.placement.shards, 0);
  EXPECT_TRUE(s.faults.empty());
}

TEST(ScenarioTest, EveryLabelStyle) {
  for (const auto& [text, style] :
       std::vector<std::pair<std::string, LabelStyle>>{
           {"kubeflow", LabelStyle::kKubeflow},
           {"seed", LabelStyle::kSeed},
           {"tf_config", LabelStyle::kTfConfig},
           {"name_only", LabelStyle::kNameOnly}}) {
    json doc = Example();
    doc["jobs"][0]["labels"] = text;
    EXPECT_EQ(ParseScenario(doc).jobs[0].labels, style) << text;
    EXPECT_EQ(LabelStyleName(style), text);
  }
}

struct BadCase {
  std::string what;
  std::function<void(json&)> mutate;
  std::string message;  // substring of the error
};

TEST(ScenarioTest, BadFilesNameFieldAndProblem) {
  const std::vector<BadCase> cases = {
      {"unknown strategy",
       [](json& d) { d["jobs"][0]["placement"]["strategy"] = "random"; },
       "jobs[0].placement.strategy: unknown strategy \"random\""},
      {"negative bytes",
       [](json& d) { d["jobs"][0]["variables"][0]["bytes"] = -5; },
       "jobs[0].variables[0].bytes: must not be negative"},
      {"zero bytes", [](json& d) { d["jobs"][0]["variables"][0]["bytes"] = 0; },
       "jobs[0].variables[0].bytes: must be >= 1"},
      {"negative ps", [](json& d) { d["jobs"][0]["ps"] = -1; },
       "jobs[0].ps: must not be negative"},
      {"no workers", [](json& d) { d["jobs"][0]["workers"] = 0; },
       "jobs[0].workers: must be >= 1"},
      // Found by fuzz.scenario: 3e12 PS took the parser past its timeout.
      {"absurd ps", [](json& d) { d["jobs"][0]["ps"] = 2999999999999; },
       "jobs[0].ps: must be <= 1000"},
      {"absurd variable count",
       [](json& d) { d["jobs"][0]["variables"][0]["count"] = 1000000000000; },
       "jobs[0].variables[0].count: more than 10000 variables"},
      {"negative step_ms", [](json& d) { d["jobs"][0]["step_ms"] = -1; },
       "jobs[0].step_ms: must not be negative"},
      {"negative compute", [](json& d) { d["jobs"][0]["compute_ms"] = -1; },
       "jobs[0].compute_ms: must not be negative"},
      {"unknown compute device",
       [](json& d) { d["jobs"][0]["compute_on"] = "gpu"; },
       "jobs[0].compute_on: unknown compute device \"gpu\""},
      {"negative memory",
       [](json& d) {
         d["jobs"][0]["resources"]["ps"]["memory_limit_bytes"] = -1;
       },
       "jobs[0].resources.ps.memory_limit_bytes: must not be negative"},
      {"zero cpu",
       [](json& d) {
         d["jobs"][0]["resources"]["worker"]["cpu_limit_cores"] = 0;
       },
       "jobs[0].resources.worker.cpu_limit_cores: must be > 0"},
      {"fault for missing pod",
       [](json& d) { d["faults"][0]["pod"] = "ctr-worker-99"; },
       "faults[0].pod: no pod named \"ctr-worker-99\""},
      {"expect for missing pod",
       [](json& d) { d["expect"][0]["pod"] = "nope"; },
       "expect[0].pod: no pod named \"nope\""},
      {"unknown diagnosis", [](json& d) { d["allow"][0]["kind"] = "hot_ps"; },
       "allow[0].kind: unknown diagnosis kind \"hot_ps\""},
      {"duplicate job", [](json& d) { d["jobs"].push_back(d["jobs"][0]); },
       "jobs[1].name: duplicate pod name \"ctr-ps-0\""},
      {"duplicate variable",
       [](json& d) {
         d["jobs"][0]["variables"][1]["name"] = "embedding";
         d["jobs"][0]["variables"][1].erase("count");
       },
       "jobs[0].variables[1].name: duplicate variable name \"embedding\""},
      {"duplicate from count",
       [](json& d) { d["jobs"][0]["variables"][0]["name"] = "dense_3"; },
       "jobs[0].variables[1].name: duplicate variable name \"dense_3\""},
      {"shards zero", [](json& d) { d["jobs"][0]["placement"]["shards"] = 0; },
       "jobs[0].placement.shards: must be >= 1"},
      {"count zero", [](json& d) { d["jobs"][0]["variables"][1]["count"] = 0; },
       "jobs[0].variables[1].count: must be >= 1"},
      {"unknown fault", [](json& d) { d["faults"][0]["kind"] = "disk_full"; },
       "faults[0].kind: unknown fault kind \"disk_full\""},
      {"fault missing param", [](json& d) { d["faults"][0].erase("cores"); },
       "faults[0].cores: is required"},
      {"negative start", [](json& d) { d["faults"][0]["start_s"] = -1; },
       "faults[0].start_s: must not be negative"},
      {"start after end", [](json& d) { d["faults"][0]["start_s"] = 90; },
       "faults[0].start_s: must be < duration_s"},
      {"gpu utilization", [](json& d) { d["faults"][5]["utilization"] = 1.5; },
       "faults[5].utilization: must be <= 1"},
      {"memory_fill without limit",
       [](json& d) { d["faults"][3]["pod"] = "ctr-worker-0"; },
       "faults[3].pod: memory_fill needs a memory_limit_bytes"},
      {"unknown label style", [](json& d) { d["jobs"][0]["labels"] = "k8s"; },
       "jobs[0].labels: unknown label style \"k8s\""},
      {"typo in key",
       [](json& d) { d["jobs"][0]["placement"]["stratgy"] = "greedy"; },
       "jobs[0].placement.stratgy: unknown field"},
      {"wrong type", [](json& d) { d["jobs"][0]["ps"] = "4"; },
       "jobs[0].ps: must be an integer"},
      {"no name", [](json& d) { d.erase("name"); }, "name: is required"},
      {"empty jobs", [](json& d) { d["jobs"] = json::array(); },
       "jobs: must be a non-empty array"},
      {"zero duration", [](json& d) { d["duration_s"] = 0; },
       "duration_s: must be > 0"},
      {"negative interval", [](json& d) { d["interval_s"] = -2; },
       "interval_s: must be > 0"},
      {"port too big", [](json& d) { d["jobs"][0]["port"] = 70000; },
       "jobs[0].port: must be <= 65535"},
      {"variables without ps",
       [](json& d) {
         d["jobs"][0]["ps"] = 0;
         d["faults"] = json::array();
         d["expect"] = json::array();
       },
       "jobs[0].ps: must be >= 1 when the job has variables"},
  };
  for (const BadCase& c : cases) {
    json doc = Example();
    c.mutate(doc);
    try {
      ParseScenario(doc);
      ADD_FAILURE() << c.what << ": accepted";
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
          << c.what << ": got \"" << e.what() << "\"";
    }
  }
}

// Third edition: step_ms 0 runs the steps back to back (free-running).
TEST(ScenarioTest, StepMsZeroIsFreeRunning) {
  json doc = Example();
  doc["jobs"][0]["step_ms"] = 0;
  EXPECT_EQ(ParseScenario(doc).jobs[0].step_ms, 0);
  doc["jobs"][0].erase("step_ms");
  EXPECT_EQ(ParseScenario(doc).jobs[0].step_ms, 1000);
}

// A worker's compute on an accelerator: wall time with its CPU idle.
TEST(ScenarioTest, ComputeOn) {
  json doc = Example();
  EXPECT_EQ(ParseScenario(doc).jobs[0].compute_on, ComputeOn::kCpu);
  doc["jobs"][0]["compute_on"] = "accelerator";
  EXPECT_EQ(ParseScenario(doc).jobs[0].compute_on, ComputeOn::kAccelerator);
}

TEST(ScenarioTest, NotJson) {
  EXPECT_THROW(ParseScenarioText("{nope"), ScenarioError);
}

TEST(ScenarioTest, FileErrorsNameTheFile) {
  try {
    LoadScenarioFile("/nonexistent/s.json");
    FAIL();
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/s.json"),
              std::string::npos);
  }
}

// Third edition: hang and checkpoint faults.
json WithFault(const json& fault) {
  json doc = Example();
  doc["faults"] = json::array({fault});
  return doc;
}

// Each (fault, message): the scenario with that fault is refused with an
// error containing the message.
void ExpectEachFaultRejected(
    const std::vector<std::pair<const char*, const char*>>& cases) {
  for (const auto& [fault, message] : cases) {
    try {
      ParseScenario(WithFault(json::parse(fault)));
      ADD_FAILURE() << "accepted " << fault;
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << e.what() << "\n  wanted: " << message;
    }
  }
}

TEST(ScenarioTest, ParsesHangAndCheckpointFaults) {
  const Scenario s = ParseScenario(WithFault(json::parse(
      R"({"kind": "hang", "mode": "link_blackhole", "pod": "ctr-worker-1",
          "peer": "ctr-ps-0", "start_s": 25, "duration_s": 70})")));
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].kind, FaultKind::kHang);
  EXPECT_EQ(s.faults[0].hang_mode, HangMode::kLinkBlackhole);
  EXPECT_EQ(s.faults[0].peer, "ctr-ps-0");
  EXPECT_EQ(s.faults[0].duration_s, 70);
  for (const char* mode : {"sigstop", "busy_loop", "blocked_io", "all_wait"}) {
    const Scenario m = ParseScenario(
        WithFault({{"kind", "hang"}, {"mode", mode}, {"pod", "ctr-ps-1"}}));
    EXPECT_EQ(HangModeName(m.faults[0].hang_mode), mode);
    EXPECT_EQ(m.faults[0].duration_s, 0);  // until the run ends
    EXPECT_EQ(m.faults[0].peer, "");
  }
  const Scenario c = ParseScenario(WithFault(json::parse(
      R"({"kind": "checkpoint", "pod": "ctr-worker-0", "bytes": 300000000,
          "start_s": 30})")));
  EXPECT_EQ(c.faults[0].kind, FaultKind::kCheckpoint);
  EXPECT_EQ(c.faults[0].bytes, 300000000u);
}

TEST(ScenarioTest, RejectsBadHangAndCheckpointFaults) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"kind": "hang", "mode": "freeze", "pod": "ctr-ps-0"})",
       "faults[0].mode: unknown hang mode \"freeze\" (one of: sigstop, "
       "busy_loop, blocked_io, link_blackhole, all_wait)"},
      {R"({"kind": "hang", "pod": "ctr-ps-0"})", "faults[0].mode: is required"},
      {R"({"kind": "hang", "mode": "link_blackhole", "pod": "ctr-ps-0"})",
       "faults[0].peer: is required for mode link_blackhole"},
      {R"({"kind": "hang", "mode": "link_blackhole", "pod": "ctr-ps-0",
           "peer": "ctr-ps-9"})",
       "faults[0].peer: no pod named \"ctr-ps-9\" in the scenario"},
      {R"({"kind": "hang", "mode": "link_blackhole", "pod": "ctr-ps-0",
           "peer": "ctr-ps-0"})",
       "faults[0].peer: must not be the pod itself"},
      {R"({"kind": "hang", "mode": "sigstop", "pod": "ctr-ps-0",
           "peer": "ctr-ps-1"})",
       "faults[0].peer: only for mode link_blackhole"},
      {R"({"kind": "hang", "mode": "sigstop", "pod": "ctr-ps-0",
           "duration_s": -1})",
       "faults[0].duration_s: must not be negative"},
      {R"({"kind": "checkpoint", "pod": "ctr-ps-0", "bytes": 0})",
       "faults[0].bytes: must be >= 1, got 0"},
      {R"({"kind": "checkpoint", "pod": "ctr-ps-0", "bytes": -5})",
       "faults[0].bytes: must not be negative"},
      {R"({"kind": "checkpoint", "pod": "ctr-ps-0"})",
       "faults[0].bytes: is required"},
      {R"({"kind": "cpu_limit", "pod": "ctr-ps-0", "cores": 1,
           "duration_s": 5})",
       "faults[0].duration_s: unknown field"},
  };
  ExpectEachFaultRejected(cases);
}

TEST(ScenarioTest, ParsesOomFault) {
  // ctr-ps-* have a memory limit in Example().
  const Scenario s = ParseScenario(WithFault(
      json::parse(R"({"kind": "oom", "pod": "ctr-ps-1", "start_s": 20})")));
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].kind, FaultKind::kOom);
  EXPECT_EQ(s.faults[0].start_s, 20);
  EXPECT_EQ(s.faults[0].every_s, 0);  // once
  EXPECT_TRUE(KillsPodProcess(s.faults[0].kind));
  const Scenario loop = ParseScenario(WithFault(json::parse(
      R"({"kind": "oom", "pod": "ctr-ps-0", "start_s": 5, "every_s": 30})")));
  EXPECT_EQ(loop.faults[0].every_s, 30);
}

TEST(ScenarioTest, RejectsBadOomFaults) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {R"({"kind": "oom", "pod": "ctr-worker-0"})",
       "faults[0].pod: oom needs a memory_limit_bytes for the pod's role"},
      {R"({"kind": "oom", "pod": "ctr-ps-0", "every_s": 0.5})",
       "faults[0].every_s: must be 0 (once) or >= 1"},
      {R"({"kind": "oom", "pod": "ctr-ps-0", "every_s": -2})",
       "faults[0].every_s: must not be negative"},
      {R"({"kind": "oom", "pod": "ctr-ps-0", "exit_code": 137})",
       "faults[0].exit_code: unknown field"},
      {R"({"kind": "oom", "pod": "ctr-ps-9"})",
       "faults[0].pod: no pod named \"ctr-ps-9\" in the scenario"},
  };
  ExpectEachFaultRejected(cases);
}

TEST(ScenarioTest, ExpectAndAllowNameAJob) {
  json doc = Example();
  doc["expect"] = json::parse(
      R"([{"kind": "training_stalled", "job": "training/ctr",
           "severity": "critical"}])");
  doc["allow"] =
      json::parse(R"([{"kind": "cpu_throttled", "job": "training/ctr"}])");
  const Scenario s = ParseScenario(doc);
  EXPECT_EQ(s.expect[0].job, "training/ctr");
  EXPECT_EQ(s.expect[0].pod, "");
  EXPECT_EQ(s.allow[0].job, "training/ctr");
  const std::vector<std::pair<json, const char*>> bad = {
      {json::parse(R"([{"kind": "training_stalled", "job": "ctr"}])"),
       "expect[0].job: no job \"ctr\" in the scenario (namespace/name)"},
      {json::parse(R"([{"kind": "training_stalled", "job": "other/ctr"}])"),
       "expect[0].job: no job \"other/ctr\""},
      {json::parse(R"([{"kind": "training_stalled", "job": "training/ctr",
                        "pod": "ctr-ps-0"}])"),
       "expect[0].pod: give one of pod, node or job"},
  };
  for (const auto& [expect, message] : bad) {
    doc["expect"] = expect;
    try {
      ParseScenario(doc);
      ADD_FAILURE() << "accepted " << expect;
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
          << e.what();
    }
  }
}

// Every shipped scenario must stay valid.
TEST(ScenarioTest, ShippedScenariosParse) {
  int n = 0;
  for (const auto& e : std::filesystem::directory_iterator(
           std::string(TRAINSCOPE_SOURCE_DIR) + "/bench/scenarios")) {
    if (e.path().extension() != ".json") continue;
    ++n;
    EXPECT_NO_THROW(LoadScenarioFile(e.path().string())) << e.path();
  }
  EXPECT_GE(n, 5);
}

TEST(ScenarioTest, ExpectSeverityIncludesInfo) {
  json doc = Example();
  doc["expect"][0]["severity"] = "info";
  EXPECT_EQ(ParseScenario(doc).expect[0].severity, "info");
  for (const char* ok : {"warning", "critical"}) {
    doc["expect"][0]["severity"] = ok;
    EXPECT_EQ(ParseScenario(doc).expect[0].severity, ok);
  }
  doc["expect"][0]["severity"] = "notice";
  try {
    ParseScenario(doc);
    ADD_FAILURE() << "accepted severity notice";
  } catch (const ScenarioError& e) {
    EXPECT_NE(std::string(e.what()).find("expect[0].severity: must be "
                                         "\"info\", \"warning\" or "
                                         "\"critical\""),
              std::string::npos)
        << e.what();
  }
}

TEST(ScenarioTest, StepRateCheckOnUnlessSkippedWithAReason) {
  EXPECT_EQ(ParseScenario(Example()).skip_step_rate_check, "");
  json doc = Example();
  doc["skip_step_rate_check"] = "the job's steps have no period";
  EXPECT_EQ(ParseScenario(doc).skip_step_rate_check,
            "the job's steps have no period");
  for (const json& bad : {json(""), json(true)}) {
    doc["skip_step_rate_check"] = bad;
    EXPECT_THROW(ParseScenario(doc), ScenarioError) << bad;
  }
}

TEST(ScenarioTest, StepRatesMayBeWithdrawnOnlyWithAReason) {
  EXPECT_EQ(ParseScenario(Example()).step_rates_may_withdraw, "");
  json doc = Example();
  doc["step_rates_may_withdraw"] = "no silence marks a step";
  EXPECT_EQ(ParseScenario(doc).step_rates_may_withdraw,
            "no silence marks a step");
  for (const json& bad : {json(""), json(true)}) {
    doc["step_rates_may_withdraw"] = bad;
    EXPECT_THROW(ParseScenario(doc), ScenarioError) << bad;
  }
}

// A withdrawn rate passes only where documented (docs/trainsim.md): the
// scenarios whose links are saturated from the first step.
TEST(ScenarioTest, OnlyLinksSaturatedFromTheStartMayWithdrawStepRates) {
  std::vector<std::string> allowing;
  for (const auto& e : std::filesystem::directory_iterator(
           std::string(TRAINSCOPE_SOURCE_DIR) + "/bench/scenarios")) {
    if (e.path().extension() != ".json") continue;
    const Scenario s = LoadScenarioFile(e.path().string());
    if (!s.step_rates_may_withdraw.empty()) allowing.push_back(s.name);
  }
  std::sort(allowing.begin(), allowing.end());
  EXPECT_EQ(allowing,
            (std::vector<std::string>{"free-allreduce-uplink-shaped",
                                      "realfw-torch-ddp-uplink-from-start"}));
}

// Issue 14: the step-rate check covers step times from 100 ms to 5 s, so
// some shipped scenario runs each end with the check on.
TEST(ScenarioTest, ShippedScenariosCoverStepTimes) {
  int fastest = 1 << 30, slowest = 0;
  for (const auto& e : std::filesystem::directory_iterator(
           std::string(TRAINSCOPE_SOURCE_DIR) + "/bench/scenarios")) {
    if (e.path().extension() != ".json") continue;
    const Scenario s = LoadScenarioFile(e.path().string());
    if (!s.skip_step_rate_check.empty()) continue;
    for (const Job& job : s.jobs) {
      if (job.program || job.step_ms == 0) continue;  // free-running
      fastest = std::min(fastest, job.step_ms);
      slowest = std::max(slowest, job.step_ms);
    }
  }
  EXPECT_LE(fastest, 100);
  EXPECT_GE(slowest, 5000);
}

// The README's claim: the one shipped scenario that skips the check is the
// ring with no silence between its steps; every other checks every worker.
TEST(ScenarioTest, OnlyTheUnpacedRingSkipsTheStepRateCheck) {
  std::vector<std::string> skipping;
  for (const auto& e : std::filesystem::directory_iterator(
           std::string(TRAINSCOPE_SOURCE_DIR) + "/bench/scenarios")) {
    if (e.path().extension() != ".json") continue;
    const Scenario s = LoadScenarioFile(e.path().string());
    if (!s.skip_step_rate_check.empty()) skipping.push_back(s.name);
  }
  EXPECT_EQ(skipping, std::vector<std::string>{"allreduce-slow-link"});
}

}  // namespace
}  // namespace trainsim
