#include "verify_match.h"

#include <gtest/gtest.h>

#include "cluster_verify.h"

namespace trainsim {
namespace {

using nlohmann::json;

Scenario Make() {
  return ParseScenarioText(
      R"({"name": "s", "duration_s": 60, "jobs": [{"name": "ctr", "ps": 2, "workers": 2}],
    "faults": [{"kind": "cpu_limit", "pod": "ctr-worker-1", "cores": 0.1, "start_s": 10}],
    "expect": [{"kind": "hot_parameter_server", "pod": "ctr-ps-0"},
               {"kind": "straggler_worker", "pod": "ctr-worker-1"}],
    "allow": [{"kind": "cpu_throttled", "pod": "ctr-worker-1"}]})");
}

json Report(std::vector<std::tuple<std::string, std::string, std::string>> ds) {
  json r = {{"generated_at", "x"},
            {"node", "n"},
            {"diagnoses", json::array()},
            {"jobs", json::array()}};
  for (auto& [kind, pod, severity] : ds)
    r["diagnoses"].push_back(
        {{"kind", kind}, {"pod", pod}, {"severity", severity}});
  return r;
}

TEST(VerifyMatchTest, PassesWhenEveryExpectationSeen) {
  Scenario s = Make();
  VerifyTracker t(s);
  t.Observe(Report({{"hot_parameter_server", "ctr-ps-0", "warning"}}), 6);
  EXPECT_FALSE(t.Passed());
  EXPECT_EQ(t.DetectedCount(), 1u);
  t.Observe(Report({{"straggler_worker", "ctr-worker-1", "critical"},
                    {"cpu_throttled", "ctr-worker-1", "warning"},
                    {"memory_pressure", "ctr-ps-1", "info"},
                    {"network_saturated", "someone-else", "critical"}}),
            18.5);
  EXPECT_TRUE(t.Passed());
  json r = json::parse(t.ResultJson().dump());
  EXPECT_EQ(r["scenario"], "s");
  EXPECT_EQ(r["passed"], true);
  EXPECT_EQ(
      r["detected"],
      json::parse(
          R"([{"kind": "hot_parameter_server", "pod": "ctr-ps-0", "after_s": 6.0},
      {"kind": "straggler_worker", "pod": "ctr-worker-1", "after_s": 8.5}])"));
  EXPECT_EQ(r["missing"], json::array());
  EXPECT_EQ(r["unexpected"], json::array());
  // DESIGN.md's key order.
  EXPECT_EQ(t.ResultJson().dump().substr(0, 40),
            R"({"scenario":"s","passed":true,"detected")");
}

TEST(VerifyMatchTest, MissingAndUnexpected) {
  Scenario s = Make();
  VerifyTracker t(s);
  t.Observe(Report({{"hot_parameter_server", "ctr-ps-0", "info"},
                    {"memory_pressure", "ctr-ps-1", "warning"}}),
            4);
  t.Observe(json("garbage"), 5);
  json r = json::parse(t.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["missing"].size(), 2u);
  EXPECT_EQ(r["unexpected"],
            json::parse(R"([{"kind": "memory_pressure", "pod": "ctr-ps-1"}])"));
}

Scenario WithSeverities() {
  return ParseScenarioText(
      R"({"name": "s", "duration_s": 60, "jobs": [{"name": "ctr", "ps": 2, "workers": 2}],
    "expect": [{"kind": "hot_parameter_server", "pod": "ctr-ps-0", "severity": "info"},
               {"kind": "straggler_worker", "pod": "ctr-worker-1", "severity": "critical"}],
    "allow": [{"kind": "hot_parameter_server", "pod": "ctr-ps-0"}]})");
}

TEST(VerifyMatchTest, StatedSeverityMustBeSeen) {
  Scenario s = WithSeverities();
  VerifyTracker t(s);
  // A warning does not meet a "critical" expectation.
  t.Observe(Report({{"hot_parameter_server", "ctr-ps-0", "info"},
                    {"straggler_worker", "ctr-worker-1", "warning"}}),
            4);
  EXPECT_EQ(t.DetectedCount(), 1u);
  EXPECT_FALSE(t.Passed());
  t.Observe(Report({{"hot_parameter_server", "ctr-ps-0", "info"},
                    {"straggler_worker", "ctr-worker-1", "critical"}}),
            8);
  EXPECT_EQ(t.DetectedCount(), 2u);
  EXPECT_TRUE(t.Passed());
  json r = json::parse(t.ResultJson().dump());
  EXPECT_EQ(r["detected"][0]["after_s"], 4.0);
  EXPECT_EQ(r["detected"][1]["after_s"], 8.0);
}

TEST(VerifyMatchTest, FindingWhereInfoExpectedFailsEvenIfAllowed) {
  Scenario s = WithSeverities();
  VerifyTracker t(s);
  t.Observe(Report({{"hot_parameter_server", "ctr-ps-0", "info"},
                    {"straggler_worker", "ctr-worker-1", "critical"}}),
            4);
  EXPECT_TRUE(t.Passed());
  t.Observe(Report({{"hot_parameter_server", "ctr-ps-0", "warning"}}), 6);
  EXPECT_FALSE(t.Passed());
  json r = json::parse(t.ResultJson().dump());
  EXPECT_EQ(r["missing"], json::array());
  EXPECT_EQ(r["unexpected"], json::parse(R"([{"kind": "hot_parameter_server",
      "pod": "ctr-ps-0", "severity": "warning", "expected_severity": "info"}])"));
  t.Observe(Report({{"hot_parameter_server", "ctr-ps-0", "critical"}}), 8);
  r = json::parse(t.ResultJson().dump());
  EXPECT_EQ(r["unexpected"][0]["severity"], "critical");
}

TEST(VerifyMatchTest, InfoNeitherDetectsNorIsUnexpected) {
  Scenario s = Make();  // expectations without severity
  VerifyTracker t(s);
  t.Observe(Report({{"hot_parameter_server", "ctr-ps-0", "info"},
                    {"straggler_worker", "ctr-worker-1", "info"},
                    {"memory_pressure", "ctr-ps-1", "info"}}),
            12);
  EXPECT_EQ(t.DetectedCount(), 0u);
  json r = json::parse(t.ResultJson().dump());
  EXPECT_EQ(r["missing"].size(), 2u);
  EXPECT_EQ(r["unexpected"], json::array());
}

TEST(VerifyMatchTest, ClusterViewsReportWrongSeverity) {
  Scenario s = ParseScenarioText(
      R"({"name": "c", "nodes": [{"name": "node-a"}, {"name": "node-b"}],
    "jobs": [{"name": "ctr", "ps": 2, "workers": 2, "layout": "spread"}],
    "expect": [{"kind": "hot_parameter_server", "pod": "ctr-ps-0", "severity": "info"}]})");
  ClusterVerify v(s, {"node-a", "node-b"});
  const json info = Report({{"hot_parameter_server", "ctr-ps-0", "info"}});
  v.Observe(ClusterVerify::kClusterView, info, 4);
  v.Observe(ClusterVerify::kClusterTriageView, info, 4);
  v.Observe("node-a", Report({{"hot_parameter_server", "ctr-ps-0", "warning"}}),
            4);
  v.Observe("node-b", info, 4);
  json r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["missing"], json::array());
  ASSERT_EQ(r["unexpected"].size(), 1u);
  EXPECT_EQ(r["unexpected"][0]["expected_severity"], "info");
}

}  // namespace
}  // namespace trainsim
