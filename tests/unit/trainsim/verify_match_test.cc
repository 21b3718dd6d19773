#include "verify_match.h"

#include <gtest/gtest.h>

#include "cluster_verify.h"
#include "layout.h"

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
  // node-a holds a worker, so it must name it (as info): it does, then
  // raises it to warning.
  v.Observe("node-a", info, 4);
  v.Observe("node-a", Report({{"hot_parameter_server", "ctr-ps-0", "warning"}}),
            6);
  v.Observe("node-b", info, 4);
  json r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["missing"], json::array());
  ASSERT_EQ(r["unexpected"].size(), 1u);
  EXPECT_EQ(r["unexpected"][0]["expected_severity"], "info");
}

// A cluster scenario of one job (`job`: the job's keys) on `nodes` nodes
// named node-a, node-b, ... with one expect entry.
Scenario OneJob(int nodes, const std::string& job, const std::string& expect) {
  std::string names;
  for (int k = 0; k < nodes; ++k)
    names += std::string(k ? ", " : "") + "{\"name\": \"node-" +
             static_cast<char>('a' + k) + "\"}";
  return ParseScenarioText(R"({"name": "v", "nodes": [)" + names +
                           R"(], "jobs": [{"name": "j", )" + job +
                           R"(}], "expect": [)" + expect + "]}");
}

struct RequiredCase {
  const char* name;
  int nodes;
  const char* job;
  const char* expect;
  std::vector<std::string> required;  // node views, declared order
};

TEST(ViewRuleTest, WhichNodeViewsMustName) {
  const std::vector<RequiredCase> cases = {
      // PS i, worker j on node (i, j) mod 3: rank-worker-2's node holds two
      // workers (too few to compare); node-a and node-b each hold a PS that
      // serves all six workers and compares them from its side.
      {"straggler, cross-node, PS side",
       3,
       R"("ps": 2, "workers": 6, "layout": "ps_with_workers",
          "variables": [{"name": "w", "bytes": 300000, "count": 2}])",
       R"({"kind": "straggler_worker", "pod": "j-worker-2"})",
       {"node-a", "node-b"}},
      // One variable: only ps-0 (node-a) serves; ps-1 on node-b sees none.
      {"straggler, PS without variables",
       2,
       R"("ps": 2, "workers": 4, "layout": "ps_with_workers",
          "variables": [{"name": "w", "bytes": 300000}])",
       R"({"kind": "straggler_worker", "pod": "j-worker-1"})",
       {"node-a"}},
      // Four workers on node-b, with the suspect; node-a has the PS.
      {"straggler, local workers and the PS side",
       2,
       R"("ps": 1, "workers": 4, "layout": "ps_isolated", "ps_nodes": 1)",
       R"({"kind": "straggler_worker", "pod": "j-worker-2"})",
       {"node-a", "node-b"}},
      // Three local workers on node-b but the suspect is on node-c: node-b
      // compares its own workers only; node-a (the PS) holds enough.
      {"straggler elsewhere than the compared workers",
       3,
       R"("ps": 1, "workers": 4, "layout": "ps_isolated", "ps_nodes": 1,
          "pod_nodes": {"j-worker-1": "node-b", "j-worker-3": "node-c"})",
       R"({"kind": "straggler_worker", "pod": "j-worker-3"})",
       {"node-a"}},
      // Synchronous workers move the same bytes: only the cause rule, which
      // needs three local workers with the suspect. Spread: one each.
      {"straggler, ps_sync, spread",
       3,
       R"("kind": "ps_sync", "ps": 1, "workers": 3, "layout": "spread",
          "variables": [{"name": "w", "bytes": 300000}])",
       R"({"kind": "straggler_worker", "pod": "j-worker-1"})",
       {}},
      {"allreduce straggler, one rank per node",
       4,
       R"("kind": "allreduce", "ps": 0, "workers": 4, "gradient_bytes": 1000000, "layout": "spread")",
       R"({"kind": "allreduce_straggler", "pod": "j-worker-1"})",
       {}},
      {"allreduce straggler with a peer rank",
       2,
       R"("kind": "allreduce", "ps": 0, "workers": 4, "gradient_bytes": 1000000,
          "layout": "ps_with_workers")",
       R"({"kind": "allreduce_straggler", "pod": "j-worker-1"})",
       {"node-b"}},
      // node-a holds every PS and no worker; node-b and node-c a worker.
      {"hot PS, every PS on one node",
       3,
       R"("ps": 2, "workers": 2, "layout": "ps_isolated", "ps_nodes": 1)",
       R"({"kind": "hot_parameter_server", "pod": "j-ps-0"})",
       {"node-a", "node-b", "node-c"}},
      // node-a and node-b hold some PS each and no worker: neither judges.
      {"hot PS, PS split over nodes",
       4,
       R"("ps": 3, "workers": 1, "layout": "ps_isolated", "ps_nodes": 2)",
       R"({"kind": "hot_parameter_server", "pod": "j-ps-0"})",
       {"node-c"}},
      {"input IO, suspect with two peers",
       2,
       R"("ps": 1, "workers": 3, "layout": "ps_isolated", "ps_nodes": 1)",
       R"({"kind": "input_io_bound", "pod": "j-worker-0"})",
       {"node-b"}},
      {"input IO, suspect with one peer",
       3,
       R"("ps": 1, "workers": 4, "layout": "ps_isolated", "ps_nodes": 1)",
       R"({"kind": "input_io_bound", "pod": "j-worker-0"})",
       {}},
      // Single-pod kinds: the pod's node, whatever else it holds.
      {"single pod",
       3,
       R"("ps": 1, "workers": 4, "layout": "ps_isolated", "ps_nodes": 1)",
       R"({"kind": "cpu_throttled", "pod": "j-worker-1"})",
       {"node-c"}},
      {"single PS pod",
       3,
       R"("ps": 1, "workers": 4, "layout": "ps_isolated", "ps_nodes": 1)",
       R"({"kind": "parameter_server_cpu_saturated", "pod": "j-ps-0"})",
       {"node-a"}},
      {"node level",
       3,
       R"("ps": 1, "workers": 2, "layout": "spread")",
       R"({"kind": "network_saturated", "node": "node-b"})",
       {"node-b"}},
  };
  for (const RequiredCase& c : cases) {
    Scenario s = OneJob(c.nodes, c.job, c.expect);
    const Layout layout = MakeLayout(s, "0a1b2c3d");
    EXPECT_EQ(NodesThatMustName(layout, s.expect.at(0)), c.required) << c.name;
    std::vector<std::string> views = {ClusterVerify::kClusterView,
                                      ClusterVerify::kClusterTriageView};
    views.insert(views.end(), c.required.begin(), c.required.end());
    std::vector<std::string> nodes;
    for (const NodeSpec& n : s.nodes) nodes.push_back(n.name);
    EXPECT_EQ(ClusterVerify(s, nodes).RequiredViews(0), views) << c.name;
  }
}

json Named(const std::string& kind, const std::string& pod) {
  return Report({{kind, pod, "warning"}});
}

void ObserveAll(ClusterVerify& v, const std::vector<std::string>& views,
                const json& report, double at) {
  for (const std::string& view : views) v.Observe(view, report, at);
}

TEST(ViewRuleTest, CrossNodeStragglerNamedOnlyByTheClusterViews) {
  Scenario s = OneJob(
      4,
      R"("kind": "allreduce", "ps": 0, "workers": 4, "gradient_bytes": 1000000,
                          "layout": "spread")",
      R"({"kind": "allreduce_straggler", "pod": "j-worker-1"})");
  ClusterVerify v(s, {"node-a", "node-b", "node-c", "node-d"});
  const json named = Named("allreduce_straggler", "j-worker-1");
  v.Observe(ClusterVerify::kClusterView, named, 6);
  EXPECT_EQ(v.DetectedCount(), 0u);  // the triaged view too
  v.Observe(ClusterVerify::kClusterTriageView, named, 8);
  EXPECT_EQ(v.DetectedCount(), 1u);
  json r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], true) << r.dump();
  EXPECT_EQ(r["detected"], json::parse(R"([{"kind": "allreduce_straggler",
      "pod": "j-worker-1", "after_s": 8.0,
      "required_views": ["cluster", "cluster_triage"]}])"));
  EXPECT_EQ(r["views"]["node-b"]["missing"],
            json::parse(R"([{"kind": "allreduce_straggler",
                "pod": "j-worker-1", "required": false}])"));
  EXPECT_EQ(r["views"]["cluster"]["detected"][0]["required"], true);
}

// Third edition: a job-level diagnosis (empty pod) matches expect[].job by
// kind, namespace and training_job.
// A node's full link names the job filling it (training_job set, pod empty)
// and stays a node-level diagnosis (cluster-uplink-saturated.json).
TEST(VerifyMatchTest, NodeLevelDiagnosisNamingAJobStaysNodeLevel) {
  const Scenario s = ParseScenarioText(
      R"({"name": "s", "duration_s": 60,
          "nodes": [{"name": "node-a"}, {"name": "node-b"}],
          "jobs": [{"namespace": "training", "name": "ads", "ps": 1,
                    "workers": 2, "layout": "spread"}],
          "expect": [{"kind": "network_saturated", "node": "node-a"}]})");
  VerifyTracker t(s);
  json r = Report({});
  r["diagnoses"].push_back({{"kind", "network_saturated"},
                            {"severity", "warning"},
                            {"namespace", "training"},
                            {"training_job", "ads"},
                            {"node", "node-a"},
                            {"pod", ""}});
  t.Observe(r, 20);
  EXPECT_TRUE(t.Passed()) << t.ResultJson().dump();
}

TEST(VerifyMatchTest, JobLevelDiagnosisMatchesExpectJob) {
  const Scenario s = ParseScenarioText(
      R"({"name": "s", "duration_s": 60,
          "jobs": [{"namespace": "training", "name": "ring", "kind": "allreduce",
                    "workers": 3, "gradient_bytes": 1000},
                   {"namespace": "training", "name": "other", "ps": 1, "workers": 1}],
          "faults": [{"kind": "hang", "mode": "all_wait", "pod": "ring-worker-1",
                      "start_s": 20}],
          "expect": [{"kind": "training_stalled", "job": "training/ring",
                      "severity": "critical"}]})");
  VerifyTracker t(s);
  auto job_level = [](const std::string& ns, const std::string& job,
                      const std::string& severity) {
    json r = Report({});
    r["diagnoses"].push_back({{"kind", "training_stalled"},
                              {"severity", severity},
                              {"namespace", ns},
                              {"training_job", job},
                              {"pod", ""}});
    return r;
  };
  // Another namespace's job of the same name is not this scenario's.
  t.Observe(job_level("default", "ring", "critical"), 24);
  EXPECT_EQ(t.DetectedCount(), 0u);
  t.Observe(job_level("training", "ring", "warning"), 26);
  EXPECT_EQ(t.DetectedCount(), 0u);  // critical required
  t.Observe(job_level("training", "ring", "critical"), 31.5);
  EXPECT_TRUE(t.Passed()) << t.ResultJson().dump();
  json r = json::parse(t.ResultJson().dump());
  EXPECT_EQ(r["detected"], json::parse(R"([{"kind": "training_stalled",
      "pod": "", "job": "training/ring", "after_s": 11.5}])"));
  // The same kind naming a pod is a different finding, and so is the
  // other job's.
  t.Observe(Report({{"training_stalled", "ring-worker-1", "critical"}}), 33);
  t.Observe(job_level("training", "other", "critical"), 34);
  r = json::parse(t.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["unexpected"], json::parse(R"([
      {"kind": "training_stalled", "pod": "", "job": "training/other"},
      {"kind": "training_stalled", "pod": "ring-worker-1"}])"));
}

TEST(VerifyMatchTest, AllowJobCoversAJobLevelFinding) {
  const Scenario s = ParseScenarioText(
      R"({"name": "s", "duration_s": 60,
          "jobs": [{"namespace": "ns", "name": "ctr", "ps": 1, "workers": 2}],
          "allow": [{"kind": "training_stalled", "job": "ns/ctr"}]})");
  VerifyTracker t(s);
  json r = Report({});
  r["diagnoses"].push_back({{"kind", "training_stalled"},
                            {"severity", "critical"},
                            {"namespace", "ns"},
                            {"training_job", "ctr"},
                            {"pod", ""}});
  t.Observe(r, 10);
  EXPECT_TRUE(t.Passed()) << t.ResultJson().dump();
}

TEST(ViewRuleTest, JobExpectationNeedsANodeHoldingTheWholeJob) {
  // spread over 2 nodes: no node holds the whole job, so only the cluster
  // views must name it; on one node holding all, that node's view too.
  const Scenario spread =
      OneJob(2, R"("namespace": "t", "kind": "allreduce", "workers": 3,
            "gradient_bytes": 1000, "layout": "spread")",
             R"({"kind": "training_stalled", "job": "t/j"})");
  EXPECT_EQ(NodesThatMustName(MakeLayout(spread, "00000000"), spread.expect[0]),
            std::vector<std::string>{});
  const Scenario together =
      OneJob(2, R"("namespace": "t", "kind": "allreduce", "workers": 3,
            "gradient_bytes": 1000, "layout": "spread",
            "pod_nodes": {"j-worker-1": "node-a"})",
             R"({"kind": "training_stalled", "job": "t/j"})");
  EXPECT_EQ(
      NodesThatMustName(MakeLayout(together, "00000000"), together.expect[0]),
      std::vector<std::string>{"node-a"});
}

TEST(ViewRuleTest, SinglePodExpectationNeedsItsOwnNode) {
  // ps_isolated: ps-0 on node-a, workers on node-b and node-c in turn.
  Scenario s = OneJob(3,
                      R"("ps": 1, "workers": 2, "layout": "ps_isolated",
                          "ps_nodes": 1)",
                      R"({"kind": "cpu_throttled", "pod": "j-worker-0"})");
  ClusterVerify v(s, {"node-a", "node-b", "node-c"});
  const json named = Named("cpu_throttled", "j-worker-0");
  ObserveAll(v, {"cluster", "cluster_triage", "node-a", "node-c"}, named, 10);
  EXPECT_EQ(v.DetectedCount(), 0u);
  json r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["missing"], json::parse(R"([{"kind": "cpu_throttled",
      "pod": "j-worker-0",
      "required_views": ["cluster", "cluster_triage", "node-b"],
      "missing_from": ["node-b"]}])"));
  EXPECT_EQ(r["views"]["node-c"]["detected"][0]["required"], false);
  EXPECT_EQ(r["views"]["node-b"]["missing"][0]["required"], true);
  v.Observe("node-b", named, 12);
  r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], true) << r.dump();
  EXPECT_EQ(r["detected"][0]["after_s"], 12.0);
  EXPECT_EQ(r["detected"][0]["required_views"],
            json::parse(R"(["cluster", "cluster_triage", "node-b"])"));
}

TEST(ViewRuleTest, HotPsRequiredWhereANodeHoldsEveryPs) {
  Scenario s = OneJob(3,
                      R"("ps": 2, "workers": 2, "layout": "ps_isolated",
                          "ps_nodes": 1)",
                      R"({"kind": "hot_parameter_server", "pod": "j-ps-0"})");
  ClusterVerify v(s, {"node-a", "node-b", "node-c"});
  const json named = Named("hot_parameter_server", "j-ps-0");
  ObserveAll(v, {"cluster", "cluster_triage", "node-b", "node-c"}, named, 8);
  json r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["missing"][0]["missing_from"], json::parse(R"(["node-a"])"));
  v.Observe("node-a", named, 9);
  EXPECT_EQ(v.DetectedCount(), 1u);
  r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], true);
  EXPECT_EQ(r["detected"][0]["after_s"], 9.0);
}

TEST(ViewRuleTest, UnexpectedInANodeViewThatNeedNotNameFails) {
  Scenario s = OneJob(
      4,
      R"("kind": "allreduce", "ps": 0, "workers": 4, "gradient_bytes": 1000000,
                          "layout": "spread")",
      R"({"kind": "allreduce_straggler", "pod": "j-worker-1"})");
  ClusterVerify v(s, {"node-a", "node-b", "node-c", "node-d"});
  ObserveAll(v, {"cluster", "cluster_triage"},
             Named("allreduce_straggler", "j-worker-1"), 6);
  v.Observe("node-d", Named("memory_pressure", "j-worker-3"), 7);
  json r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["missing"], json::array());
  EXPECT_EQ(
      r["unexpected"],
      json::parse(R"([{"kind": "memory_pressure", "pod": "j-worker-3"}])"));
}

}  // namespace
}  // namespace trainsim
