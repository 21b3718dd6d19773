// A real 2-node cluster: node bridges, the fabric, uplinks shaped with tbf,
// per-node cgroup slices and the API's nodeName. Cross-node traffic must
// cross both uplinks, same-node traffic neither, and teardown must leave
// nothing. Root only; each test cleans up by run id in TearDown.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "cgroups.h"
#include "cleanup.h"
#include "exec.h"
#include "fabric.h"
#include "node.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// node-a: the PS and worker-0; node-b: worker-1. Worker traffic of
// worker-0 stays on node-a's bridge, worker-1's crosses both uplinks.
constexpr const char* kTwoNodes = R"({
  "name": "priv-cluster", "duration_s": 30, "interval_s": 1,
  "nodes": [{"name": "node-a", "nic_mbit": 200}, {"name": "node-b"}],
  "jobs": [{"namespace": "training", "name": "cj", "ps": 1, "workers": 2,
            "step_ms": 100, "compute_ms": 1, "layout": "ps_with_workers",
            "pod_nodes": {"cj-worker-0": "node-a", "cj-worker-1": "node-b"},
            "variables": [{"name": "w", "bytes": 200000}]}]
})";

// Only the same-node pair: both workers on node-a with the PS.
constexpr const char* kSameNode = R"({
  "name": "priv-cluster-local", "duration_s": 30, "interval_s": 1,
  "nodes": [{"name": "node-a"}, {"name": "node-b"}],
  "jobs": [{"namespace": "training", "name": "lj", "ps": 1, "workers": 1,
            "step_ms": 100, "compute_ms": 1, "layout": "ps_with_workers",
            "variables": [{"name": "w", "bytes": 200000}]}]
})";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class ClusterPrivilegedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    run_id_ = NewRunId();
    dir_ = ::testing::TempDir() + "/trainsim-cluster-" + run_id_;
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (run_id_.empty()) return;
    for (const std::string& l : CleanupRun(run_id_, false))
      ADD_FAILURE() << "left: " << l;
    fs::remove_all(dir_);
  }
  std::string Write(const char* text) {
    const std::string path = dir_ + "/scenario.json";
    std::ofstream(path) << text;
    return path;
  }
  void ExpectNothingLeft() {
    const auto ids = LeftoverRunIds();
    EXPECT_EQ(std::count(ids.begin(), ids.end(), run_id_), 0);
    EXPECT_EQ(RunCommand({"ip", "link", "show"}).output.find("ts" + run_id_),
              std::string::npos);
    EXPECT_EQ(
        RunCommand({"ip", "netns", "list"}).output.find("trainsim-" + run_id_),
        std::string::npos);
    for (const Hierarchy& h : DetectHierarchies())
      EXPECT_TRUE(RunNodeSlices(h, run_id_).empty()) << h.root;
    EXPECT_FALSE(fs::exists(RunDir(run_id_)));
  }
  std::string run_id_, dir_;
};

TEST_F(ClusterPrivilegedTest, CrossNodeTrafficCrossesBothUplinks) {
  const std::string path = Write(kTwoNodes);
  {
    SimNode node(LoadScenarioFile(path), path, run_id_);
    node.set_exe(TRAINSIM_BIN);
    node.Prepare();
    const Layout& l = node.layout();
    ASSERT_TRUE(l.cluster());
    const SimNodeInfo& a = l.nodes[0];
    const SimNodeInfo& b = l.nodes[1];
    // The kernel objects: bridges without addresses, uplinks on the right
    // masters, tbf on both ends of node-a's uplink only.
    for (const std::string& dev : {l.fabric_bridge, a.bridge, b.bridge}) {
      ASSERT_TRUE(fs::exists("/sys/class/net/" + dev + "/bridge")) << dev;
      EXPECT_EQ(RunCommand({"ip", "-4", "addr", "show", "dev", dev})
                    .output.find("inet "),
                std::string::npos);
    }
    EXPECT_EQ(
        fs::read_symlink("/sys/class/net/" + a.uplink + "/master").filename(),
        a.bridge);
    EXPECT_EQ(fs::read_symlink("/sys/class/net/" + a.fabric_end + "/master")
                  .filename(),
              l.fabric_bridge);
    for (const std::string& dev : {a.uplink, a.fabric_end})
      EXPECT_NE(
          RunCommand({"tc", "qdisc", "show", "dev", dev}).output.find("tbf"),
          std::string::npos)
          << dev;
    EXPECT_EQ(
        RunCommand({"tc", "qdisc", "show", "dev", b.uplink}).output.find("tbf"),
        std::string::npos);
    // Pods hang on their node's bridge, their cgroups under its slice.
    const SimPod& w1 = *l.Find("cj-worker-1");
    EXPECT_EQ(fs::read_symlink("/sys/class/net/" + w1.host_veth + "/master")
                  .filename(),
              b.bridge);
    for (const Hierarchy& h : node.cgroups().hierarchies())
      EXPECT_TRUE(
          fs::is_directory(h.root + "/" + b.cgroup_parent + "/kubepods.slice"))
          << h.root;
    // The API: spec.nodeName per node, selectable.
    httplib::Client api(node.api_url());
    auto res = api.Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b");
    ASSERT_TRUE(res);
    json list = json::parse(res->body);
    ASSERT_EQ(list["items"].size(), 1u);
    EXPECT_EQ(list["items"][0]["metadata"]["name"], "cj-worker-1");

    const LinkCounters a0 = ReadLinkCounters(a.uplink);
    const LinkCounters b0 = ReadLinkCounters(b.uplink);
    node.StartPods();
    std::this_thread::sleep_for(std::chrono::seconds(3));
    node.StopPods();
    const LinkCounters a1 = ReadLinkCounters(a.uplink);
    const LinkCounters b1 = ReadLinkCounters(b.uplink);
    std::map<std::string, uint64_t> steps;
    GroundTruth truth = node.Truth(&steps);
    const uint64_t cross = truth["cj-ps-0"]["cj-worker-1"].tx;
    const uint64_t cross_grad = truth["cj-ps-0"]["cj-worker-1"].rx;
    ASSERT_GT(cross, 1000000u);
    // PS -> worker-1 leaves node-a (tx of its uplink) and enters node-b
    // (rx of its uplink); the gradients go the other way. TCP/IP headers
    // only add, and nothing else uses these links.
    EXPECT_GE(a1.tx_bytes - a0.tx_bytes, cross);
    EXPECT_GE(b1.rx_bytes - b0.rx_bytes, cross);
    EXPECT_GE(a1.rx_bytes - a0.rx_bytes, cross_grad);
    EXPECT_GE(b1.tx_bytes - b0.tx_bytes, cross_grad);
    // worker-0's exchange stayed on node-a's bridge: the uplink carried
    // about worker-1's share only (headers: a few percent).
    const uint64_t local = truth["cj-ps-0"]["cj-worker-0"].tx;
    ASSERT_GT(local, 1000000u);
    EXPECT_LT(a1.tx_bytes - a0.tx_bytes, cross + cross / 5 + 100000);
  }
  ExpectNothingLeft();
}

TEST_F(ClusterPrivilegedTest, SameNodeTrafficStaysOffTheUplinks) {
  const std::string path = Write(kSameNode);
  {
    SimNode node(LoadScenarioFile(path), path, run_id_);
    node.set_exe(TRAINSIM_BIN);
    node.Prepare();
    const SimNodeInfo& a = node.layout().nodes[0];
    const LinkCounters a0 = ReadLinkCounters(a.uplink);
    node.StartPods();
    std::this_thread::sleep_for(std::chrono::seconds(2));
    node.StopPods();
    const LinkCounters a1 = ReadLinkCounters(a.uplink);
    GroundTruth truth = node.Truth();
    ASSERT_GT(truth["lj-ps-0"]["lj-worker-0"].tx, 1000000u);
    // No unicast crosses: at most a few flooded frames (ARP) before the
    // bridge learned the addresses.
    EXPECT_LT(a1.tx_bytes - a0.tx_bytes, 20000u);
    EXPECT_LT(a1.rx_bytes - a0.rx_bytes, 20000u);
  }
  ExpectNothingLeft();
}

TEST_F(ClusterPrivilegedTest, SigkilledClusterRunIsCleanedUp) {
  const std::string path = Write(kTwoNodes);
  Subprocess sup = Subprocess::Spawn(
      {TRAINSIM_BIN, "run", "--scenario", path, "--run-id", run_id_},
      dir_ + "/run.log");
  // Wait for the uplinks, then kill the supervisor without a teardown.
  const std::string uplink = "/sys/class/net/ts" + run_id_ + "n1u";
  for (int i = 0; i < 200 && !fs::exists(uplink); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(fs::exists(uplink)) << ReadAll(dir_ + "/run.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  kill(sup.pid(), SIGKILL);
  sup.Stop(std::chrono::seconds(2));
  const auto ids = LeftoverRunIds();
  EXPECT_EQ(std::count(ids.begin(), ids.end(), run_id_), 1);
  CommandResult r = RunCommand({TRAINSIM_BIN, "cleanup", "--run-id", run_id_},
                               std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  ExpectNothingLeft();
}

}  // namespace
}  // namespace trainsim
