#include "verify_match.h"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace trainsim
