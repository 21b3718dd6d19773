// The agent's watch against a real kube-apiserver and etcd (issue 32;
// scripts/platform.sh) where fakes are kindest: a bookmark carries its
// resourceVersion across a quiet watch, etcd compacted past the version the
// agent holds (a real 410, then a relist), the API server stopped and
// started again mid-watch, and the peer-pod watch naming every node's
// training pods while one of them is deleted and recreated.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "agent_process.h"
#include "platform_agent.h"
#include "test_platform.h"
#include "test_wait.h"

namespace trainscope::testing {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

// What the agent's own watch asks for: its node's pods.
constexpr char kNodeQuery[] = "fieldSelector=spec.nodeName%3Dnode-a";

// Polls `done` every 100 ms (each poll is an HTTP request or a kubectl run).
bool Eventually(const std::function<bool()>& done,
                std::chrono::milliseconds timeout) {
  return WaitUntil(
      [&] {
        if (done()) return true;
        std::this_thread::sleep_for(100ms);
        return false;
      },
      timeout);
}

int64_t ResourceVersionOf(const std::string& request_uri) {
  static const std::regex kRv("[?&]resourceVersion=([0-9]+)");
  std::smatch m;
  return std::regex_search(request_uri, m, kRv) ? std::stoll(m[1]) : -1;
}

class ApiServerWatchTest : public ::testing::Test {
 protected:
  void TearDown() override {
    agent_.reset();
    platform_.reset();
  }

  void StartPlatform(TestPlatformOptions options = {}) {
    platform_ = std::make_unique<TestPlatform>(std::move(options));
    ASSERT_TRUE(platform_->ok()) << platform_->error();
    int rc = 0;
    const std::string out =
        platform_->Kubectl("create namespace training", &rc);
    ASSERT_EQ(rc, 0) << out;
  }

  void StartAgent(std::vector<std::string> extra = {}) {
    port_ = FreePort();
    agent_ = std::make_unique<AgentProcess>(PlatformAgentArgs(
        *platform_, platform_->admin_token_file(), port_, std::move(extra)));
    ASSERT_TRUE(agent_->WaitHttpOk(port_, "/readyz", 20s)) << agent_->Stderr();
  }

  void Create(const std::vector<nlohmann::json>& pods) {
    int rc = 0;
    const std::string out = platform_->Create(KubeList(pods).dump(), &rc);
    ASSERT_EQ(rc, 0) << out.substr(0, 500);
  }
  void Delete(const std::string& pod) {
    int rc = 0;
    const std::string out = platform_->Kubectl(
        "delete pod -n training " + pod + " --grace-period=0 --force", &rc);
    ASSERT_EQ(rc, 0) << out;
  }

  // The agent's node-pod requests the API server audited, by verb.
  std::vector<AuditedRequest> NodeRequests(const std::string& verb,
                                           const std::string& stage) const {
    std::vector<AuditedRequest> out;
    for (auto& r : platform_->AuditedPodRequests()) {
      if (r.verb == verb && r.stage == stage &&
          r.request_uri.find(kNodeQuery) != std::string::npos) {
        out.push_back(std::move(r));
      }
    }
    return out;
  }

  std::map<std::string, std::string> AgentPods() const {
    return testing::AgentPods(port_);
  }

  std::unique_ptr<TestPlatform> platform_;
  std::unique_ptr<AgentProcess> agent_;
  int port_ = 0;
};

// Pods of another node move the cluster's resourceVersion on while the
// node's own watch sees none of them; the API server's bookmark (sent 2 s
// before the watch's timeoutSeconds) hands the agent that version, so the
// renewed watch starts there: no pod added, no relist.
TEST_F(ApiServerWatchTest, ABookmarkCarriesTheVersionAcrossAQuietWatch) {
  StartPlatform({.audit_pods = true});
  Create({TrainingPod("real-ps-0", "node-a", "ps", 0)});
  StartAgent({"--kube-watch-timeout", "10"});
  ASSERT_TRUE(Eventually([&] { return AgentPods().size() == 1; }, 10s));

  std::vector<nlohmann::json> elsewhere;
  for (int i = 0; i < 5; ++i) {
    elsewhere.push_back(
        TrainingPod("real-worker-" + std::to_string(i), "node-b", "worker", i));
  }
  Create(elsewhere);
  int rc = 0;
  const std::string versions = platform_->Kubectl(
      "get pods -n training -o jsonpath={.items[*].metadata.resourceVersion}",
      &rc);
  ASSERT_EQ(rc, 0) << versions;
  int64_t moved_to = 0;
  std::istringstream in(versions);
  for (int64_t v = 0; in >> v;) moved_to = std::max(moved_to, v);

  EXPECT_TRUE(Eventually(
      [&] {
        for (const auto& w : NodeRequests("watch", "ResponseStarted")) {
          if (ResourceVersionOf(w.request_uri) >= moved_to) return true;
        }
        return false;
      },
      30s))
      << "no watch resumed at or after resourceVersion " << moved_to
      << " (the node-b pods'); the bookmark was not taken";
  EXPECT_EQ(NodeRequests("list", "ResponseComplete").size(), 1u)
      << "a bookmark must not cause a relist";
  EXPECT_EQ(AgentPods().size(), 1u) << "a bookmark is not a pod";
  EXPECT_EQ(PodInfoSeries(port_, "real-ps-0"), 1);
}

// The watch cache off for pods (watches read etcd) and the API server
// compacting etcd every 2 s: once the compaction passes the version the
// agent holds, its renewed watch gets a real 410 ("too old"), and the
// relist brings the same pods, once each, and the watch goes on.
TEST_F(ApiServerWatchTest, RelistsWithoutLosingOrDoublingPodsAfterA410) {
  StartPlatform({.apiserver_args =
                     "--watch-cache-sizes pods#0 --etcd-compaction-interval 2s",
                 .audit_pods = true});
  Create({TrainingPod("real-ps-0", "node-a", "ps", 0),
          TrainingPod("real-worker-0", "node-a", "worker", 0)});
  StartAgent({"--kube-watch-timeout", "3"});
  ASSERT_TRUE(Eventually([&] { return AgentPods().size() == 2; }, 10s));
  const auto before = AgentPods();

  std::vector<nlohmann::json> elsewhere;
  for (int i = 1; i <= 40; ++i) {
    elsewhere.push_back(
        TrainingPod("real-worker-" + std::to_string(i), "node-b", "worker", i));
  }
  Create(elsewhere);
  ASSERT_TRUE(Eventually(
      [&] {
        return agent_->Stderr().find("(410 Gone), re-listing") !=
               std::string::npos;
      },
      30s))
      << agent_->Stderr();
  EXPECT_THAT(agent_->Stderr(), HasSubstr("too old"));
  ASSERT_TRUE(Eventually(
      [&] { return NodeRequests("list", "ResponseComplete").size() >= 2; },
      10s))
      << "no relist after the 410";

  EXPECT_EQ(AgentPods(), before) << "the same pods, same UIDs, after relist";
  std::this_thread::sleep_for(1s);  // two samples (--interval 0.5)
  for (const auto& [name, uid] : before) {
    EXPECT_EQ(PodInfoSeries(port_, name), 1) << name;
  }
  Create({TrainingPod("real-worker-41", "node-a", "worker", 41)});
  EXPECT_TRUE(
      Eventually([&] { return AgentPods().count("real-worker-41") == 1; }, 15s))
      << "the watch goes on after the relist";
  EXPECT_EQ(AgentPods().size(), 3u);
}

// kube-apiserver stopped mid-watch (etcd keeps the data) and started again
// on the same port. While it is down the agent keeps its pods and serves
// its metrics, counting the failures; the changes made once the server is
// back, while the agent still waits out its backoff, arrive with its
// relist: a pod deleted, one added, one deleted and recreated (a new UID).
TEST_F(ApiServerWatchTest, FollowsTheApiServerThroughARestart) {
  StartPlatform();
  Create({TrainingPod("real-ps-0", "node-a", "ps", 0),
          TrainingPod("real-worker-0", "node-a", "worker", 0),
          TrainingPod("real-worker-1", "node-a", "worker", 1),
          TrainingPod("real-worker-2", "node-b", "worker", 2)});
  StartAgent();
  ASSERT_TRUE(Eventually([&] { return AgentPods().size() == 3; }, 10s));
  const std::string old_ps_uid = UidOf(*platform_, "real-ps-0");
  const double errors_before =
      AgentMetric(port_, "trainscope_discovery_errors_total").value_or(-1);

  ASSERT_TRUE(platform_->StopApiServer());
  EXPECT_TRUE(Eventually(
      [&] {
        return AgentMetric(port_, "trainscope_discovery_errors_total")
                   .value_or(0) > errors_before;
      },
      10s))
      << agent_->Stderr();
  int status = 0;
  EXPECT_TRUE(HttpGet(port_, "/metrics", &status).has_value());
  EXPECT_EQ(status, 200);
  EXPECT_EQ(AgentPods().size(), 3u) << "the last known pods are kept";
  EXPECT_EQ(PodInfoSeries(port_, "real-worker-1"), 1);

  ASSERT_TRUE(platform_->StartApiServer()) << platform_->error();
  const auto back = std::chrono::steady_clock::now();
  Delete("real-worker-1");
  Create({TrainingPod("real-worker-3", "node-a", "worker", 3)});
  Delete("real-ps-0");
  Create({TrainingPod("real-ps-0", "node-a", "ps", 0)});
  const std::string new_ps_uid = UidOf(*platform_, "real-ps-0");
  ASSERT_NE(new_ps_uid, old_ps_uid);

  EXPECT_TRUE(Eventually(
      [&] {
        auto pods = AgentPods();
        return pods.size() == 3 && pods.count("real-worker-3") &&
               pods.count("real-worker-0") && pods["real-ps-0"] == new_ps_uid;
      },
      45s))
      << agent_->Stderr();
  // Series follow the pod table at the next sample (--interval 0.5).
  EXPECT_TRUE(Eventually(
      [&] {
        return PodInfoSeries(port_, "real-worker-1") == 0 &&
               PodInfoSeries(port_, "real-ps-0") == 1;
      },
      5s));
  EXPECT_THAT(agent_->Stderr(), HasSubstr("list works again"));
  RecordProperty("seconds_from_restart_to_pods",
                 std::to_string(std::chrono::duration<double>(
                                    std::chrono::steady_clock::now() - back)
                                    .count()));
}

// The peer-pod watch (on by default) against the real server: every
// node's training pods in the peer table, this node's in the pod table,
// and a pod of another node deleted and recreated under its name leaves
// the table as it was. The 5,000-pod run is bench/platform_scale.
TEST_F(ApiServerWatchTest, ThePeerWatchHoldsEveryNodesTrainingPods) {
  StartPlatform();
  std::vector<nlohmann::json> pods;
  for (int i = 0; i < 200; ++i) {
    const std::string node = "node-" + std::string(1, 'a' + i % 10);
    pods.push_back(
        TrainingPod("real-worker-" + std::to_string(i), node, "worker", i));
  }
  Create(pods);
  StartAgent({"--peer-pods-selector", "auto"});
  auto peers = [&] {
    return AgentMetric(port_, "trainscope_discovery_peer_pods").value_or(-1);
  };
  ASSERT_TRUE(Eventually([&] { return peers() == 200; }, 20s)) << peers();
  EXPECT_EQ(AgentPods().size(), 20u) << "node-a's pods only";
  EXPECT_EQ(AgentMetric(port_, "trainscope_discovery_peer_ready"), 1);

  Delete("real-worker-1");  // node-b's
  ASSERT_TRUE(Eventually([&] { return peers() == 199; }, 10s)) << peers();
  Create({TrainingPod("real-worker-1", "node-b", "worker", 1)});
  EXPECT_TRUE(Eventually([&] { return peers() == 200; }, 10s)) << peers();
  EXPECT_EQ(AgentMetric(port_, "trainscope_discovery_peer_errors_total"), 0);
}

}  // namespace
}  // namespace trainscope::testing
