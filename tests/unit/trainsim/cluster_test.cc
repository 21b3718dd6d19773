// The cluster half of trainsim: scenario keys, placement over nodes, the
// names of every node's kernel objects, agent command lines, the
// Prometheus config and the multi-view verdict. Pure code, no root.
#include "cluster.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "agents.h"
#include "cgroups.h"
#include "cluster_verify.h"
#include "pod_json.h"
#include "prometheus_runner.h"
#include "scenario.h"

namespace trainsim {
namespace {

using nlohmann::json;

json Cluster() {
  return json::parse(R"({
    "name": "c", "duration_s": 60, "interval_s": 2,
    "nodes": [{"name": "node-a", "nic_mbit": 100}, {"name": "node-b"},
              {"name": "node-c", "nic_mbit": 50}],
    "jobs": [{"name": "ctr", "ps": 2, "workers": 4, "layout": "ps_isolated",
              "ps_nodes": 1, "pod_nodes": {"ctr-worker-3": "node-a"},
              "variables": [{"name": "e", "bytes": 1000}]}],
    "faults": [{"kind": "node_bandwidth_limit", "node": "node-b", "mbit": 20,
                "start_s": 5}],
    "expect": [{"kind": "network_saturated", "node": "node-b",
                "severity": "warning"},
               {"kind": "hot_parameter_server", "pod": "ctr-ps-0"}],
    "allow": [{"kind": "network_saturated", "node": "node-a"}]
  })");
}

TEST(ClusterSpecTest, ParsesNodesLayoutsFaultsAndNodeExpectations) {
  Scenario s = ParseScenario(Cluster());
  ASSERT_EQ(s.nodes.size(), 3u);
  EXPECT_EQ(s.nodes[0].name, "node-a");
  EXPECT_EQ(s.nodes[0].nic_mbit, 100);
  EXPECT_EQ(s.nodes[1].nic_mbit, 0);
  EXPECT_EQ(s.jobs[0].layout, NodeLayout::kPsIsolated);
  EXPECT_EQ(s.jobs[0].ps_nodes, 1);
  EXPECT_EQ(s.jobs[0].pod_nodes.at("ctr-worker-3"), "node-a");
  ASSERT_EQ(s.faults.size(), 1u);
  EXPECT_EQ(s.faults[0].kind, FaultKind::kNodeBandwidthLimit);
  EXPECT_EQ(s.faults[0].node, "node-b");
  EXPECT_EQ(s.faults[0].pod, "");
  EXPECT_EQ(s.faults[0].mbit, 20);
  EXPECT_EQ(s.expect[0],
            (Expectation{"network_saturated", "", "node-b", "warning"}));
  EXPECT_EQ(s.expect[1],
            (Expectation{"hot_parameter_server", "ctr-ps-0", "", ""}));
  EXPECT_EQ(NodeLayoutName(NodeLayout::kRandom), "random");
}

TEST(ClusterSpecTest, SingleNodeScenariosHaveNoNodes) {
  Scenario s = ParseScenarioText(
      R"({"name": "s", "jobs": [{"name": "j", "ps": 1, "workers": 1}]})");
  EXPECT_TRUE(s.nodes.empty());
  EXPECT_FALSE(s.jobs[0].layout.has_value());
  Layout l = MakeLayout(s, "0a1b2c3d");
  EXPECT_FALSE(l.cluster());
  ASSERT_EQ(l.nodes.size(), 1u);
  EXPECT_EQ(l.nodes[0].name, "trainsim-0a1b2c3d");
  EXPECT_EQ(l.nodes[0].bridge, "ts0a1b2c3dbr");
  EXPECT_EQ(l.nodes[0].uplink, "");
  for (const SimPod& p : l.pods) {
    EXPECT_EQ(p.node, 0);
    EXPECT_EQ(p.cgroup_parent, "");
  }
}

struct BadCase {
  std::string what;
  std::function<void(json&)> mutate;
  std::string message;  // substring of the error
};

TEST(ClusterSpecTest, InconsistentNodesAndPlacementAreRefusedWithTheirPath) {
  const std::vector<BadCase> cases = {
      {"duplicate node", [](json& d) { d["nodes"][2]["name"] = "node-a"; },
       "nodes[2].name: duplicate node name \"node-a\""},
      {"nodes not an array", [](json& d) { d["nodes"] = json::object(); },
       "nodes: must be a non-empty array"},
      {"no nodes", [](json& d) { d["nodes"] = json::array(); },
       "nodes: must be a non-empty array"},
      {"node without name", [](json& d) { d["nodes"][1].erase("name"); },
       "nodes[1].name: is required"},
      {"bad node name", [](json& d) { d["nodes"][1]["name"] = "Node_B"; },
       "nodes[1].name: \"Node_B\" is not a node name"},
      {"zero nic", [](json& d) { d["nodes"][0]["nic_mbit"] = 0; },
       "nodes[0].nic_mbit: must be a number > 0"},
      {"unknown node key", [](json& d) { d["nodes"][0]["cpus"] = 4; },
       "nodes[0].cpus: unknown field"},
      {"unknown node in pod_nodes",
       [](json& d) { d["jobs"][0]["pod_nodes"]["ctr-worker-3"] = "node-z"; },
       "jobs[0].pod_nodes.ctr-worker-3: no node named \"node-z\""},
      {"unknown pod in pod_nodes",
       [](json& d) { d["jobs"][0]["pod_nodes"]["ctr-worker-9"] = "node-a"; },
       "jobs[0].pod_nodes.ctr-worker-9: no pod named \"ctr-worker-9\""},
      {"pod_nodes not a name",
       [](json& d) { d["jobs"][0]["pod_nodes"]["ctr-worker-3"] = 1; },
       "jobs[0].pod_nodes.ctr-worker-3: must be a node name"},
      {"ps_nodes = node count", [](json& d) { d["jobs"][0]["ps_nodes"] = 3; },
       "jobs[0].ps_nodes: must be < the node count (3)"},
      {"ps_nodes zero", [](json& d) { d["jobs"][0]["ps_nodes"] = 0; },
       "jobs[0].ps_nodes: must be >= 1"},
      {"ps_isolated without ps_nodes",
       [](json& d) { d["jobs"][0].erase("ps_nodes"); },
       "jobs[0].ps_nodes: is required with layout ps_isolated"},
      {"ps_nodes with another layout",
       [](json& d) { d["jobs"][0]["layout"] = "spread"; },
       "jobs[0].ps_nodes: only applies to layout ps_isolated"},
      {"nodes with the layout missing",
       [](json& d) {
         d["jobs"][0].erase("layout");
         d["jobs"][0].erase("ps_nodes");
       },
       "jobs[0].layout: is required when the scenario declares nodes"},
      {"unknown layout", [](json& d) { d["jobs"][0]["layout"] = "packed"; },
       "jobs[0].layout: unknown layout \"packed\""},
      {"seed without random", [](json& d) { d["jobs"][0]["seed"] = 7; },
       "jobs[0].seed: only applies to layout random"},
      {"layout without nodes",
       [](json& d) {
         d.erase("nodes");
         d.erase("faults");
         d.erase("allow");
         d["expect"].erase(0);
       },
       "jobs[0].layout: needs a top-level `nodes` list"},
      {"node fault for unknown node",
       [](json& d) { d["faults"][0]["node"] = "node-q"; },
       "faults[0].node: no node named \"node-q\""},
      {"node fault without node", [](json& d) { d["faults"][0].erase("node"); },
       "faults[0].node: is required"},
      {"expect unknown node",
       [](json& d) { d["expect"][0]["node"] = "node-q"; },
       "expect[0].node: no node named \"node-q\""},
      {"allow unknown node", [](json& d) { d["allow"][0]["node"] = "x"; },
       "allow[0].node: no node named \"x\""},
      {"expect pod and node",
       [](json& d) { d["expect"][0]["pod"] = "ctr-ps-0"; },
       "expect[0].pod: give either pod or node, not both"},
      {"expect neither pod nor node",
       [](json& d) { d["expect"][0].erase("node"); },
       "expect[0].pod: is required (or node"},
      {"bad severity", [](json& d) { d["expect"][0]["severity"] = "high"; },
       "expect[0].severity: must be \"info\", \"warning\" or "
       "\"critical\""},
  };
  for (const BadCase& c : cases) {
    SCOPED_TRACE(c.what);
    json doc = Cluster();
    c.mutate(doc);
    try {
      ParseScenario(doc);
      ADD_FAILURE() << "accepted";
    } catch (const ScenarioError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos)
          << e.what();
    }
  }
}

// Node name per pod for a 5-PS, 7-worker job over `nodes` nodes.
std::map<std::string, std::string> Place(const std::string& layout_keys,
                                         int nodes = 3) {
  json doc = {{"name", "p"}, {"nodes", json::array()}};
  for (int k = 0; k < nodes; ++k)
    doc["nodes"].push_back({{"name", "n" + std::to_string(k)}});
  json job = json::parse(R"({"name": "j", "ps": 5, "workers": 7})");
  job.update(json::parse(layout_keys));
  doc["jobs"] = json::array({job});
  Scenario s = ParseScenario(doc);
  Layout l = MakeLayout(s, "0a1b2c3d");
  std::map<std::string, std::string> out;
  for (const SimPod& p : l.pods) out[p.name] = l.NodeOf(p).name;
  return out;
}

TEST(ClusterLayoutTest, PsWithWorkersPutsIndexModuloNodes) {
  auto m = Place(R"({"layout": "ps_with_workers"})");
  EXPECT_EQ(m["j-ps-0"], "n0");
  EXPECT_EQ(m["j-ps-1"], "n1");
  EXPECT_EQ(m["j-ps-3"], "n0");
  EXPECT_EQ(m["j-worker-0"], "n0");
  EXPECT_EQ(m["j-worker-2"], "n2");
  EXPECT_EQ(m["j-worker-4"], "n1");
}

TEST(ClusterLayoutTest, PsIsolatedKeepsWorkersOffPsNodes) {
  auto m = Place(R"({"layout": "ps_isolated", "ps_nodes": 2})", 5);
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(m["j-ps-" + std::to_string(i)], i % 2 ? "n1" : "n0");
  for (int j = 0; j < 7; ++j)
    EXPECT_EQ(m["j-worker-" + std::to_string(j)],
              "n" + std::to_string(2 + j % 3));
}

TEST(ClusterLayoutTest, SpreadGoesRoundRobinPsFirst) {
  auto m = Place(R"({"layout": "spread"})");
  EXPECT_EQ(m["j-ps-0"], "n0");
  EXPECT_EQ(m["j-ps-4"], "n1");
  EXPECT_EQ(m["j-worker-0"], "n2");  // the 6th pod of the job
  EXPECT_EQ(m["j-worker-6"], "n2");
}

TEST(ClusterLayoutTest, RandomIsReproducibleAndSeedDependent) {
  auto a = Place(R"({"layout": "random", "seed": 42})", 4);
  EXPECT_EQ(a, Place(R"({"layout": "random", "seed": 42})", 4));
  std::set<std::string> used;
  for (const auto& [pod, node] : a) used.insert(node);
  EXPECT_GE(used.size(), 2u);  // 12 pods on 4 nodes
  bool differs = false;
  for (int seed = 1; seed < 10 && !differs; ++seed)
    differs =
        Place(R"({"layout": "random", "seed": )" + std::to_string(seed) + "}",
              4) != a;
  EXPECT_TRUE(differs);
}

TEST(ClusterLayoutTest, PodNodesOverrideTheLayout) {
  auto m = Place(
      R"({"layout": "ps_with_workers", "pod_nodes": {"j-ps-0": "n2", "j-worker-1": "n0"}})");
  EXPECT_EQ(m["j-ps-0"], "n2");
  EXPECT_EQ(m["j-worker-1"], "n0");
  EXPECT_EQ(m["j-ps-1"], "n1");
}

TEST(ClusterLayoutTest, NodeObjectsAreNamedPerRunAndNode) {
  Scenario s = ParseScenario(Cluster());
  Layout l = MakeLayout(s, "0a1b2c3d");
  ASSERT_TRUE(l.cluster());
  EXPECT_EQ(l.fabric_bridge, "ts0a1b2c3dfb");
  ASSERT_EQ(l.nodes.size(), 3u);
  EXPECT_EQ(l.nodes[1].name, "node-b");
  EXPECT_EQ(l.nodes[1].bridge, "ts0a1b2c3db1");
  EXPECT_EQ(l.nodes[1].uplink, "ts0a1b2c3dn1u");
  EXPECT_EQ(l.nodes[1].fabric_end, "ts0a1b2c3dn1f");
  EXPECT_EQ(l.nodes[2].nic_mbit, 50);
  EXPECT_EQ(l.nodes[1].cgroup_parent, "trainsim-0a1b2c3d-node1.slice");
  for (const SimNodeInfo& n : l.nodes) {
    EXPECT_LE(n.bridge.size(), 15u);
    EXPECT_LE(n.uplink.size(), 15u);
  }
  // ps_isolated over 1 PS node; worker-3 pinned to node-a.
  const SimPod* w1 = l.Find("ctr-worker-1");
  const SimPod* w3 = l.Find("ctr-worker-3");
  ASSERT_TRUE(w1 && w3);
  EXPECT_EQ(l.NodeOf(*w1).name, "node-c");
  EXPECT_EQ(l.NodeOf(*w3).name, "node-a");
  EXPECT_EQ(PodCgroupPath(*w1).rfind(
                "trainsim-0a1b2c3d-node2.slice/kubepods.slice/"
                "kubepods-burstable.slice/kubepods-burstable-pod",
                0),
            0u);
  // The pod's spec names its node, as the scheduler would.
  json pod = PodJson(l, *w1, {}, "1", "2026-01-01T00:00:00Z");
  EXPECT_EQ(pod["spec"]["nodeName"], "node-c");
}

TEST(ClusterAgentsTest, EachAgentGetsItsNodeSliceAndUplink) {
  Scenario s = ParseScenario(Cluster());
  Layout l = MakeLayout(s, "0a1b2c3d");
  AgentSettings as;
  as.binary = "/bin/agent";
  as.api_url = "http://127.0.0.1:1";
  as.interval_s = 2;
  as.extra_args = {"--log-level=debug"};
  as.node_flags = true;
  as.peer_namespaces = "training,other";
  auto args = AgentArgs(as, l, 0, 9000, "/sys/fs/cgroup/unified");
  auto has = [&](const std::string& a) {
    return std::find(args.begin(), args.end(), a) != args.end();
  };
  EXPECT_TRUE(has("node-a"));
  EXPECT_TRUE(has("127.0.0.1:9000"));
  EXPECT_TRUE(has(
      "--cgroup2-path=/sys/fs/cgroup/unified/trainsim-0a1b2c3d-node0.slice"));
  EXPECT_TRUE(has("--node-interfaces=ts0a1b2c3dn0u"));
  EXPECT_TRUE(has("--node-link-mbit=100"));
  EXPECT_TRUE(has("--peer-pods-namespaces=training,other"));
  EXPECT_EQ(args.back(), "--log-level=debug");
  // node-b has no nic_mbit; without node flags no uplink is passed.
  args = AgentArgs(as, l, 1, 9001, "/sys/fs/cgroup/unified");
  EXPECT_TRUE(has("--node-interfaces=ts0a1b2c3dn1u"));
  EXPECT_FALSE(std::any_of(args.begin(), args.end(), [](const std::string& a) {
    return a.rfind("--node-link-mbit", 0) == 0;
  }));
  as.node_flags = false;
  args = AgentArgs(as, l, 1, 9001, "/sys/fs/cgroup/unified");
  EXPECT_FALSE(has("--node-interfaces=ts0a1b2c3dn1u"));
}

TEST(ClusterPrometheusTest, ConfigCarriesOperatorTargetLabels) {
  const std::string c =
      PrometheusRunner::Config({{"node-a", 9001}, {"node-b", 9002}}, 2);
  for (const char* want :
       {"scrape_interval: 2000ms", "job_name: trainscope-agent",
        "honor_labels: true", "targets: ['127.0.0.1:9001']",
        "targets: ['127.0.0.1:9002']", "instance: node-a", "instance: node-b",
        "service: trainscope-agent", "endpoint: metrics"})
    EXPECT_NE(c.find(want), std::string::npos) << want << "\n" << c;
  // Dropped by the shipped ServiceMonitor's labeldrop: never set.
  for (const char* unwanted : {"namespace:", "pod:", "container:"}) {
    EXPECT_EQ(c.find(unwanted), std::string::npos) << unwanted << "\n" << c;
  }
}

json Report(
    std::vector<std::tuple<std::string, std::string, std::string, std::string>>
        ds) {
  json r = {{"diagnoses", json::array()}};
  for (auto& [kind, pod, node, severity] : ds)
    r["diagnoses"].push_back(
        {{"kind", kind}, {"pod", pod}, {"node", node}, {"severity", severity}});
  return r;
}

TEST(ClusterVerifyTest, NeedsTheClusterViewsAndTheNodesThatHoldEnough) {
  Scenario s = ParseScenario(Cluster());
  ClusterVerify v(s, {"node-a", "node-b", "node-c"});
  // Node view only: not yet detected.
  v.Observe("node-a",
            Report({{"hot_parameter_server", "ctr-ps-0", "node-a", "warning"}}),
            10);
  EXPECT_EQ(v.DetectedCount(), 0u);
  v.Observe(
      "cluster",
      Report({{"hot_parameter_server", "ctr-ps-0", "node-a", "critical"}}), 14);
  // The triaged cluster view must name it too.
  EXPECT_EQ(v.DetectedCount(), 0u);
  v.Observe(
      "cluster_triage",
      Report({{"hot_parameter_server", "ctr-ps-0", "node-a", "critical"}}), 14);
  // A job-wide kind: node-b and node-c hold workers of the job (which talk
  // to every PS), so they must name it as well.
  EXPECT_EQ(v.DetectedCount(), 0u);
  for (const char* node : {"node-b", "node-c"})
    v.Observe(
        node,
        Report({{"hot_parameter_server", "ctr-ps-0", "node-a", "warning"}}),
        15);
  EXPECT_EQ(v.DetectedCount(), 1u);
  // A node-level expectation with a required severity: warning counts,
  // info does not; node-a's allowed saturation is not unexpected.
  v.Observe("node-b",
            Report({{"network_saturated", "", "node-b", "info"},
                    {"network_saturated", "", "node-a", "warning"}}),
            16);
  EXPECT_EQ(v.DetectedCount(), 1u);
  v.Observe("node-b", Report({{"network_saturated", "", "node-b", "warning"}}),
            18);
  v.Observe("cluster", Report({{"network_saturated", "", "node-b", "warning"}}),
            20);
  v.Observe("cluster_triage",
            Report({{"network_saturated", "", "node-b", "warning"}}), 20);
  json r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], true) << r.dump();
  EXPECT_EQ(
      r["detected"][0],
      json::parse(R"({"kind": "network_saturated", "pod": "", "node": "node-b",
                      "after_s": 15.0,
                      "required_views": ["cluster", "cluster_triage",
                                         "node-b"]})"));
  EXPECT_EQ(r["detected"][1]["after_s"], 15.0);
  EXPECT_EQ(r["detected"][1]["required_views"],
            json::parse(R"(["cluster", "cluster_triage", "node-a", "node-b",
                            "node-c"])"));
  ASSERT_TRUE(r["views"].is_object());
  EXPECT_EQ(r["views"]["cluster"]["detected"].size(), 2u);
  EXPECT_EQ(r["views"]["node-a"]["missing"].size(), 1u);
  EXPECT_EQ(r["views"]["node-a"]["missing"][0]["required"], false);
  EXPECT_EQ(r["views"]["node-c"]["missing"].size(), 1u);
  EXPECT_EQ(v.ResultJson().dump().substr(0, 40),
            R"({"scenario":"c","passed":true,"detected")");

  // An unexpected diagnosis in any single view fails the run.
  v.Observe("node-c",
            Report({{"straggler_worker", "ctr-worker-1", "node-c", "warning"}}),
            22);
  r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(
      r["unexpected"],
      json::parse(R"([{"kind": "straggler_worker", "pod": "ctr-worker-1"}])"));
  EXPECT_EQ(r["views"]["node-c"]["unexpected"].size(), 1u);
  EXPECT_EQ(r["views"]["cluster"]["unexpected"].size(), 0u);
}

TEST(ClusterVerifyTest, MissingFromTheClusterViewFails) {
  Scenario s = ParseScenario(Cluster());
  ClusterVerify v(s, {"node-a", "node-b", "node-c"});
  v.Observe("node-a",
            Report({{"hot_parameter_server", "ctr-ps-0", "", "warning"},
                    {"network_saturated", "", "node-b", "warning"}}),
            10);
  json r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["missing"].size(), 2u);
  EXPECT_EQ(r["views"]["node-a"]["detected"].size(), 2u);
}

TEST(ClusterVerifyTest, MissingFromTheTriagedClusterViewFails) {
  Scenario s = ParseScenario(Cluster());
  ClusterVerify v(s, {"node-a", "node-b", "node-c"});
  const json both =
      Report({{"hot_parameter_server", "ctr-ps-0", "node-a", "warning"},
              {"network_saturated", "", "node-b", "warning"}});
  for (const char* node : {"node-a", "node-b", "node-c"})
    v.Observe(node, both, 10);
  v.Observe("cluster", both, 12);
  v.Observe("cluster_triage",
            Report({{"hot_parameter_server", "ctr-ps-0", "node-a", "warning"}}),
            12);
  json r = json::parse(v.ResultJson().dump());
  EXPECT_EQ(r["passed"], false);
  EXPECT_EQ(r["missing"],
            json::parse(R"([{"kind": "network_saturated", "pod": "",
                             "node": "node-b",
                             "required_views": ["cluster", "cluster_triage",
                                                "node-b"],
                             "missing_from": ["cluster_triage"]}])"));
  EXPECT_EQ(r["views"]["cluster_triage"]["missing"].size(), 1u);
}

}  // namespace
}  // namespace trainsim
