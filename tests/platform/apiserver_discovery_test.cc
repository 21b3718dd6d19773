// The agent's pod discovery against a real kube-apiserver and etcd (issue
// 32; scripts/platform.sh), not the fake one: TLS with the server's CA, a
// bearer token, the RBAC authorizer, the node field selector, list pages
// (limit/continue), the watch, a pod deleted and recreated under the same
// name, and the shipped ServiceAccount's ClusterRole allowing, then (a rule
// removed) denying the list while the agent keeps serving its metrics.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "agent_process.h"
#include "platform_agent.h"
#include "test_platform.h"
#include "test_wait.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

class ApiServerDiscoveryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    platform_ = std::make_unique<TestPlatform>();
    ASSERT_TRUE(platform_->ok()) << platform_->error();
    int rc = 0;
    const std::string out =
        platform_->Kubectl("create namespace training", &rc);
    ASSERT_EQ(rc, 0) << out;
  }
  void TearDown() override {
    agent_.reset();
    platform_.reset();
  }

  // The agent on the v2-systemd fixture host as node-a, discovering pods
  // from the real API server with `token_file`.
  void StartAgent(const std::string& token_file, bool wait_ready = true) {
    port_ = FreePort();
    agent_ = std::make_unique<AgentProcess>(
        PlatformAgentArgs(*platform_, token_file, port_));
    if (wait_ready) {
      ASSERT_TRUE(agent_->WaitHttpOk(port_, "/readyz", 20s))
          << agent_->Stderr();
    }
  }

  std::map<std::string, std::string> AgentPods() {
    return testing::AgentPods(port_);
  }
  std::string UidOf(const std::string& pod) {
    return testing::UidOf(*platform_, pod);
  }

  std::unique_ptr<TestPlatform> platform_;
  std::unique_ptr<AgentProcess> agent_;
  int port_ = 0;
};

// This node's pods only (the field selector), then the watch: a pod added,
// a pod deleted and recreated with the same name (a new UID, a new role).
TEST_F(ApiServerDiscoveryTest, ListsThisNodesPodsAndFollowsTheWatch) {
  int rc = 0;
  std::string out = platform_->Apply(
      KubeList({TrainingPod("real-ps-0", "node-a", "ps", 0),
                TrainingPod("real-worker-0", "node-a", "worker", 0),
                TrainingPod("real-worker-1", "node-b", "worker", 1)})
          .dump(),
      &rc);
  ASSERT_EQ(rc, 0) << out;
  StartAgent(platform_->admin_token_file());
  ASSERT_TRUE(WaitUntil([&] { return AgentPods().size() == 2; }, 10s));
  EXPECT_TRUE(AgentPods().count("real-ps-0"));
  EXPECT_FALSE(AgentPods().count("real-worker-1")) << "a pod of node-b";

  out = platform_->Apply(
      TrainingPod("real-worker-2", "node-a", "worker", 2).dump(), &rc);
  ASSERT_EQ(rc, 0) << out;
  EXPECT_TRUE(
      WaitUntil([&] { return AgentPods().count("real-worker-2") == 1; }, 10s))
      << "the watch did not bring the new pod";

  const std::string old_uid = UidOf("real-ps-0");
  out = platform_->Kubectl(
      "delete pod -n training real-ps-0 --grace-period=0 --force", &rc);
  ASSERT_EQ(rc, 0) << out;
  out =
      platform_->Apply(TrainingPod("real-ps-0", "node-a", "ps", 0).dump(), &rc);
  ASSERT_EQ(rc, 0) << out;
  const std::string new_uid = UidOf("real-ps-0");
  ASSERT_NE(new_uid, old_uid);
  EXPECT_TRUE(WaitUntil(
      [&] {
        auto pods = AgentPods();
        return pods.size() == 3 && pods["real-ps-0"] == new_uid;
      },
      10s))
      << "the recreated pod is not the one the agent holds";
}

// 1,200 pods of the node: the first list takes three pages of 500
// (limit/continue) and none is lost or doubled.
TEST_F(ApiServerDiscoveryTest, ListsInPagesWithoutLosingPods) {
  std::vector<nlohmann::json> pods;
  for (int i = 0; i < 1200; ++i) {
    pods.push_back(
        TrainingPod("many-worker-" + std::to_string(i), "node-a", "worker", i));
  }
  int rc = 0;
  const std::string out = platform_->Apply(KubeList(pods).dump(), &rc);
  ASSERT_EQ(rc, 0) << out.substr(0, 500);
  StartAgent(platform_->admin_token_file());
  EXPECT_TRUE(WaitUntil([&] { return AgentPods().size() == 1200; }, 20s))
      << AgentPods().size() << " pods";
}

// The shipped manifests' ServiceAccount and ClusterRole, applied for real;
// the agent runs with a token of that ServiceAccount (TokenRequest). With
// the rule it lists pods; with `list` removed from the rule it says why it
// cannot, is not ready, and still serves its node's metrics.
TEST_F(ApiServerDiscoveryTest,
       TheShippedClusterRoleAllowsAndItsAbsenceIsClear) {
  int rc = 0;
  const std::string rendered = platform_->Kubectl(
      std::string("kustomize ") + TRAINSCOPE_SOURCE_DIR + "/daemonset", &rc);
  ASSERT_EQ(rc, 0) << rendered.substr(0, 500);
  const fs::path manifests = platform_->dir() / "daemonset.yaml";
  std::ofstream(manifests) << rendered;
  // CRD kinds (ServiceMonitor, PrometheusRule) have no definition on a bare
  // API server; every core kind must apply.
  std::string out = platform_->Kubectl("apply -f " + manifests.string(), &rc);
  for (const char* applied :
       {"namespace/trainscope", "serviceaccount/trainscope-agent",
        "clusterrole.rbac.authorization.k8s.io/trainscope-agent",
        "clusterrolebinding.rbac.authorization.k8s.io/trainscope-agent",
        "daemonset.apps/trainscope-agent"}) {
    EXPECT_THAT(out, HasSubstr(applied)) << out;
  }
  out =
      platform_->Apply(TrainingPod("real-ps-0", "node-a", "ps", 0).dump(), &rc);
  ASSERT_EQ(rc, 0) << out;
  const std::string token =
      platform_->Kubectl("create token trainscope-agent -n trainscope", &rc);
  ASSERT_EQ(rc, 0) << token;
  const fs::path token_file = platform_->dir() / "agent.token";
  std::ofstream(token_file) << token;

  StartAgent(token_file.string());
  EXPECT_TRUE(WaitUntil([&] { return AgentPods().count("real-ps-0"); }, 10s));
  agent_.reset();

  out = platform_->Kubectl(
      "patch clusterrole trainscope-agent --type=json -p "
      "'[{\"op\":\"replace\",\"path\":\"/rules/0/verbs\",\"value\":[\"get\","
      "\"watch\"]}]'",
      &rc);
  ASSERT_EQ(rc, 0) << out;
  StartAgent(token_file.string(), /*wait_ready=*/false);
  ASSERT_TRUE(agent_->WaitHttpOk(port_, "/metrics", 10s)) << agent_->Stderr();
  EXPECT_TRUE(WaitUntil(
      [&] { return agent_->Stderr().find("HTTP 403") != std::string::npos; },
      10s))
      << agent_->Stderr();
  EXPECT_THAT(agent_->Stderr(), HasSubstr("cannot list resource \\\"pods\\\""))
      << "the API server's reason reaches the log";
  int status = 0;
  const auto ready = HttpGet(port_, "/readyz", &status);
  EXPECT_EQ(status, 503) << ready.value_or("");
  EXPECT_TRUE(HttpGet(port_, "/metrics", &status).has_value());
  EXPECT_EQ(status, 200) << "the node's metrics are still served";
}

}  // namespace
}  // namespace trainscope::testing
