// The real agent binary with apiserver discovery against a fake Kubernetes
// API server: pods added, modified and deleted through the watch; the
// server killed and restarted; bad answers. Every case ends with the agent
// still serving and a clear log line.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "agent_process.h"
#include "fake_apiserver.h"
#include "pod_builder.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

const fs::path kHost =
    fs::path(TRAINSCOPE_SOURCE_DIR) / "tests/fixtures/hosts/v2-systemd";

nlohmann::json Pod(const std::string& name, const std::string& node,
                   const std::string& role = "worker") {
  FakePod pod;
  pod.name = name;
  pod.namespace_name = "training";
  pod.node = node;
  pod.pod_ip = "198.18.0.5";
  pod.labels = {{"training.kubeflow.org/job-name", "ctr"},
                {"training.kubeflow.org/replica-type", role},
                {"training.kubeflow.org/replica-index", "0"}};
  pod.owner_kind = "TFJob";
  pod.owner_name = "ctr";
  return pod.Build();
}

// Polls /metrics until `pred` holds (bounded).
bool EventuallyMetrics(int port,
                       const std::function<bool(const std::string&)>& pred,
                       std::chrono::milliseconds deadline = 10s) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (auto body = HttpGet(port, "/metrics"); body && pred(*body)) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

bool Has(const std::string& text, const std::string& pod) {
  return text.find("trainscope_pod_info{") != std::string::npos &&
         text.find("pod=\"" + pod + "\"") != std::string::npos;
}

class AgentApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(api_.Start());
    api_.AddPod(Pod("ctr-ps-0", "node-a", "ps"));
    api_.AddPod(Pod("ctr-worker-0", "node-a"));
    api_.AddPod(Pod("ctr-worker-9", "node-b"));  // another node's pod
    port_ = FreePort();
    agent_ = std::make_unique<AgentProcess>(std::vector<std::string>{
        "--listen", "127.0.0.1:" + std::to_string(port_), "--interval", "0.2",
        "--node-name", "node-a", "--discovery", "apiserver", "--kube-api",
        api_.url(), "--host-proc", (kHost / "proc").string(), "--host-sys",
        (kHost / "sys").string(), "--cgroup-root",
        (kHost / "sys/fs/cgroup").string()});
    ASSERT_TRUE(agent_->WaitHttpOk(port_, "/readyz", 10s)) << agent_->Stderr();
  }

  FakeApiServer api_;
  int port_ = 0;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(AgentApiServerTest, FollowsAddsModificationsAndDeletesOfThisNode) {
  ASSERT_TRUE(EventuallyMetrics(port_, [](const std::string& m) {
    return Has(m, "ctr-ps-0") && Has(m, "ctr-worker-0");
  }));
  EXPECT_FALSE(Has(*HttpGet(port_, "/metrics"), "ctr-worker-9"));

  api_.AddPod(Pod("ctr-worker-1", "node-a"));
  EXPECT_TRUE(EventuallyMetrics(
      port_, [](const std::string& m) { return Has(m, "ctr-worker-1"); }));

  auto moved = Pod("ctr-worker-1", "node-a");
  moved["status"]["podIP"] = "198.18.0.77";
  api_.ModifyPod(moved);
  EXPECT_TRUE(EventuallyMetrics(port_, [](const std::string& m) {
    return m.find("pod_ip=\"198.18.0.77\"") != std::string::npos;
  }));

  api_.DeletePod("training", "ctr-worker-0");
  EXPECT_TRUE(EventuallyMetrics(
      port_, [](const std::string& m) { return !Has(m, "ctr-worker-0"); }));
  auto pods = HttpGet(port_, "/api/v1/pods");
  ASSERT_TRUE(pods);
  EXPECT_THAT(*pods, HasSubstr("\"ctr-worker-1\""));
  EXPECT_THAT(*pods, ::testing::Not(HasSubstr("\"ctr-worker-0\"")));
}

TEST_F(AgentApiServerTest, ServerDeathKeepsPodsAndServingThenRecovers) {
  ASSERT_TRUE(EventuallyMetrics(
      port_, [](const std::string& m) { return Has(m, "ctr-ps-0"); }));
  api_.Stop();
  // Errors are counted while the last known pods stay exported.
  EXPECT_TRUE(EventuallyMetrics(port_, [](const std::string& m) {
    return Has(m, "ctr-ps-0") &&
           m.find("trainscope_discovery_errors_total{mode=\"apiserver\"} 0") ==
               std::string::npos;
  }));
  EXPECT_EQ(*HttpGet(port_, "/healthz"), "ok\n");

  api_.AddPod(Pod("ctr-worker-2", "node-a"));  // happens while "down"
  ASSERT_TRUE(api_.Restart());
  EXPECT_TRUE(EventuallyMetrics(
      port_, [](const std::string& m) { return Has(m, "ctr-worker-2"); }, 40s))
      << agent_->Stderr();
}

// Issue 15: the API server gone (seconds here; the agent's retry backoff
// caps at 30 s, so a 5-minute outage differs only in the number of failed
// rounds), changes made and history compacted meanwhile, then a watch that
// the server answers with 410 Gone. The same agent process keeps serving the
// last known pods, counts its errors, and catches up by re-listing.
TEST_F(AgentApiServerTest, OutageThenGoneOnWatchRecoversWithoutRestart) {
  ASSERT_TRUE(EventuallyMetrics(port_, [](const std::string& m) {
    return Has(m, "ctr-ps-0") && Has(m, "ctr-worker-0");
  }));
  const pid_t pid = agent_->pid();
  api_.Stop();
  EXPECT_TRUE(EventuallyMetrics(port_, [](const std::string& m) {
    return Has(m, "ctr-ps-0") && Has(m, "ctr-worker-0") &&
           m.find("trainscope_discovery_errors_total{mode=\"apiserver\"} 0") ==
               std::string::npos;
  }));
  EXPECT_EQ(*HttpGet(port_, "/healthz"), "ok\n");
  // While it is down: this node's pods change, another node's too, and the
  // history the agent's version points into is compacted away.
  api_.AddPod(Pod("ctr-worker-3", "node-a"));
  api_.DeletePod("training", "ctr-worker-0");
  api_.AddPod(Pod("far-worker-1", "node-b"));
  api_.Compact();
  ASSERT_TRUE(api_.Restart());
  EXPECT_TRUE(EventuallyMetrics(
      port_,
      [](const std::string& m) {
        return Has(m, "ctr-worker-3") && !Has(m, "ctr-worker-0");
      },
      40s))
      << agent_->Stderr();
  // Now a live watch falls behind unseen (other node) and is told 410.
  api_.AddPod(Pod("far-worker-2", "node-b"));
  api_.Compact();
  api_.EndWatches();
  for (int i = 0;
       i < 50 && agent_->Stderr().find("410 Gone") == std::string::npos; ++i) {
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_THAT(agent_->Stderr(), HasSubstr("(410 Gone), re-listing"));
  api_.AddPod(Pod("ctr-worker-4", "node-a"));
  EXPECT_TRUE(EventuallyMetrics(
      port_,
      [](const std::string& m) {
        return Has(m, "ctr-worker-4") && Has(m, "ctr-worker-3") &&
               Has(m, "ctr-ps-0");
      },
      20s))
      << agent_->Stderr();
  EXPECT_EQ(agent_->pid(), pid);
  EXPECT_FALSE(agent_->WaitExit(0ms).has_value()) << "the agent exited";
}

TEST_F(AgentApiServerTest, BadAnswersAreLoggedAndTheAgentKeepsServing) {
  struct Fault {
    int status;
    std::string body;
  } faults[] = {
      {401,
       R"({"kind":"Status","status":"Failure","reason":"Unauthorized","code":401})"},
      {403,
       R"({"kind":"Status","status":"Failure","reason":"Forbidden","code":403})"},
      {500, "internal error"},
      {200, "{not json\n"},  // a malformed list body or watch line
  };
  ASSERT_TRUE(EventuallyMetrics(
      port_, [](const std::string& m) { return Has(m, "ctr-ps-0"); }));
  for (const auto& fault : faults) {
    const size_t before = api_.requests().size();
    api_.FailNext(fault.status, fault.body, 2);
    api_.EndWatches();  // the agent reconnects and meets the fault
    // Done when both faulty answers went out and a good watch followed.
    ASSERT_TRUE(api_.WaitForRequests(
        [&](const std::vector<RecordedRequest>& reqs) {
          int failed = 0;
          for (size_t i = before; i < reqs.size(); ++i) {
            if (reqs[i].injected_status == fault.status) ++failed;
            if (failed == 2 && reqs[i].injected_status == 0 &&
                reqs[i].params.count("watch")) {
              return true;
            }
          }
          return false;
        },
        40s))
        << "agent did not recover after " << fault.status << "\n"
        << agent_->Stderr();
    auto metrics = HttpGet(port_, "/metrics");
    ASSERT_TRUE(metrics) << "agent stopped serving after " << fault.status;
    EXPECT_TRUE(Has(*metrics, "ctr-ps-0"))
        << "pods lost after " << fault.status;
  }
  const std::string log = agent_->Stderr();
  EXPECT_THAT(log, HasSubstr("401"));
  EXPECT_THAT(log, HasSubstr("403"));
  EXPECT_THAT(log, HasSubstr("500"));
  EXPECT_THAT(log, ::testing::ContainsRegex("JSON|json"));
}

// The default deployment names peers on other nodes: without any flag the
// agent watches the training pods of every node by their role labels.
TEST_F(AgentApiServerTest, PeerPodWatchIsOnByDefault) {
  ASSERT_TRUE(EventuallyMetrics(port_, [](const std::string& m) {
    return Has(m, "ctr-ps-0") &&
           m.find("trainscope_discovery_peer_ready{mode=\"apiserver\"} 1") !=
               std::string::npos;
  })) << *HttpGet(port_, "/metrics");
  bool set_based = false;
  for (const auto& r : api_.requests()) {
    auto it = r.params.find("labelSelector");
    if (it == r.params.end()) continue;
    EXPECT_EQ(r.params.count("fieldSelector"), 0u);  // every node
    if (it->second ==
        "training.kubeflow.org/replica-type in "
        "(chief,evaluator,launcher,master,mpimaster,mpiworker,node,ps,"
        "scheduler,server,worker,workers)") {
      set_based = true;
    }
  }
  EXPECT_TRUE(set_based);
}

// The peer-pod watch: training pods of every node fill the peer table
// (counted by trainscope_discovery_peer_pods) but never get pod series.
struct PeerCase {
  std::string name;  // the test name suffix
  std::vector<std::string> flags;
  std::vector<std::string> env;
  // After SetUp's pods plus a labelled pod in "research" on node-c and an
  // unlabelled one in "training" on node-c.
  int want_peers;
};

class AgentPeerPodsTest : public ::testing::TestWithParam<PeerCase> {};

TEST_P(AgentPeerPodsTest, PeerTableFollowsTheSelectedPods) {
  FakeApiServer api;
  ASSERT_TRUE(api.Start());
  api.AddPod(Pod("ctr-ps-0", "node-a", "ps"));
  api.AddPod(Pod("ctr-worker-9", "node-b"));
  auto research = Pod("res-ps-0", "node-c", "ps");
  research["metadata"]["namespace"] = "research";
  api.AddPod(research);
  FakePod plain;
  plain.name = "plain-0";
  plain.namespace_name = "training";
  plain.node = "node-c";
  api.AddPod(plain.Build());
  const int port = FreePort();
  std::vector<std::string> args = {
      "--listen",      "127.0.0.1:" + std::to_string(port),
      "--interval",    "0.2",
      "--node-name",   "node-a",
      "--discovery",   "apiserver",
      "--kube-api",    api.url(),
      "--host-proc",   (kHost / "proc").string(),
      "--host-sys",    (kHost / "sys").string(),
      "--cgroup-root", (kHost / "sys/fs/cgroup").string()};
  args.insert(args.end(), GetParam().flags.begin(), GetParam().flags.end());
  AgentProcess agent(args, GetParam().env);
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
  const std::string want =
      "trainscope_discovery_peer_pods{mode=\"apiserver\"} " +
      std::to_string(GetParam().want_peers) + "\n";
  EXPECT_TRUE(EventuallyMetrics(
      port,
      [&](const std::string& m) {
        return m.find(want) != std::string::npos && Has(m, "ctr-ps-0") &&
               m.find(
                   "trainscope_discovery_peer_ready{mode=\"apiserver\"} 1") !=
                   std::string::npos;
      }))
      << *HttpGet(port, "/metrics") << agent.Stderr();
  // Pods on other nodes name peers only: no pod series for them.
  const std::string metrics = *HttpGet(port, "/metrics");
  EXPECT_TRUE(Has(metrics, "ctr-ps-0"));
  EXPECT_FALSE(Has(metrics, "ctr-worker-9"));
  EXPECT_FALSE(Has(metrics, "res-ps-0"));

  // The watch follows: one more selected pod on another node.
  auto more = Pod("res-worker-0", "node-d");
  more["metadata"]["namespace"] = "research";
  api.AddPod(more);
  const std::string grown =
      "trainscope_discovery_peer_pods{mode=\"apiserver\"} " +
      std::to_string(GetParam().want_peers + 1) + "\n";
  EXPECT_TRUE(EventuallyMetrics(port, [&](const std::string& m) {
    return m.find(grown) != std::string::npos;
  })) << agent.Stderr();
  EXPECT_THAT(agent.Stderr(), HasSubstr("peer pods"));
}

INSTANTIATE_TEST_SUITE_P(
    Modes, AgentPeerPodsTest,
    ::testing::Values(
        // Every labelled pod of the cluster: ctr-ps-0, ctr-worker-9, res-ps-0.
        PeerCase{"Selector",
                 {"--peer-pods-selector", "training.kubeflow.org/job-name"},
                 {},
                 3},
        // The default: pods with a role label, on every node; not plain-0.
        PeerCase{"Default", {}, {}, 3},
        // The training pods of one namespace (set from the env).
        PeerCase{"NamespaceFromEnv",
                 {},
                 {"TRAINSCOPE_PEER_PODS_NAMESPACES=research"},
                 1},
        // Every pod of the namespaces, labelled or not (plain-0 too).
        PeerCase{"EveryPodOfNamespaces",
                 {"--peer-pods-selector", ""},
                 {"TRAINSCOPE_PEER_PODS_NAMESPACES=research,training"},
                 4},
        // Both: the selected pods of each namespace.
        PeerCase{"SelectorInNamespaces",
                 {"--peer-pods-namespaces", "research,training",
                  "--peer-pods-selector", "training.kubeflow.org/job-name"},
                 {},
                 3}),
    [](const ::testing::TestParamInfo<PeerCase>& param_info) {
      return param_info.param.name;
    });

TEST(AgentPeerPodsFlagsTest, PeerPodsNeedApiserverDiscovery) {
  AgentProcess agent(std::vector<std::string>{
      "--listen", "127.0.0.1:0", "--discovery", "cgroup",
      "--peer-pods-selector", "job", "--host-proc", (kHost / "proc").string(),
      "--host-sys", (kHost / "sys").string(), "--cgroup-root",
      (kHost / "sys/fs/cgroup").string()});
  auto code = agent.WaitExit(10s);
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2);
  EXPECT_THAT(agent.Stderr(), HasSubstr("--discovery apiserver"));
}

}  // namespace
}  // namespace trainscope::testing
