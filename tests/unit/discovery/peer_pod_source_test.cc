#include "discovery/peer_pod_source.h"

#include <gtest/gtest.h>

#include "discovery/pod_source_factory.h"
#include "fake_apiserver.h"
#include "pod_builder.h"
#include "test_wait.h"

namespace trainscope {
namespace {

using namespace std::chrono_literals;
using testing::FakeApiServer;
using testing::FakePod;
using testing::WaitUntil;

TEST(PeerPodQueriesTest, Table) {
  struct Case {
    std::string selector;
    std::vector<std::string> namespaces;
    std::vector<std::pair<std::string, std::string>> want;  // (ns, selector)
  } cases[] = {
      {"", {}, {}},
      {"job", {}, {{"", "job"}}},
      {"", {"a", "b"}, {{"a", ""}, {"b", ""}}},
      {"job=x", {"a"}, {{"a", "job=x"}}},
      {"", {"a", "a", "", "b"}, {{"a", ""}, {"b", ""}}},
      // ';' separates selectors: a pod matching any is a peer.
      {"a in (x);b", {}, {{"", "a in (x)"}, {"", "b"}}},
      {" a ; ;a;b ", {"n"}, {{"n", "a"}, {"n", "b"}}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.selector + " / " + std::to_string(c.namespaces.size()));
    auto queries = PeerPodQueries(c.selector, c.namespaces);
    std::vector<std::pair<std::string, std::string>> got;
    for (const auto& q : queries) {
      EXPECT_EQ(q.node_name, "");  // peers live on every node
      got.emplace_back(q.namespace_name, q.label_selector);
    }
    EXPECT_EQ(got, c.want);
  }
}

TEST(ResolvePeerPodSelectorsTest, AutoDerivesFromTheRoleLabels) {
  const std::string kRoles =
      "chief,evaluator,launcher,master,mpimaster,mpiworker,node,ps,scheduler,"
      "server,worker,workers";
  EXPECT_EQ(ResolvePeerPodSelectors("auto", DefaultLabelSchemes()),
            "training.kubeflow.org/replica-type in (" + kRoles + ");" +
                "training.kubeflow.org/job-role in (" + kRoles + ");" +
                "tf-replica-type in (" + kRoles + ");" + "replica-type in (" +
                kRoles + ");" + "pytorch-replica-type in (" + kRoles + ");" +
                "mpi-job-role in (" + kRoles + ");" +
                "jobset.sigs.k8s.io/replicatedjob-name in (" + kRoles + ");" +
                "volcano.sh/task-spec in (" + kRoles + ");" + "job in (" +
                kRoles + ")");
  EXPECT_EQ(ResolvePeerPodSelectors("", DefaultLabelSchemes()), "");
  EXPECT_EQ(ResolvePeerPodSelectors("team=ml", DefaultLabelSchemes()),
            "team=ml");
  EXPECT_EQ(ResolvePeerPodSelectors("auto", {{"app", "role", "idx"}}),
            "role in (" + kRoles + ")");
}

TEST(ParseNamespaceListTest, Table) {
  struct Case {
    std::string text;
    bool ok;
    std::vector<std::string> want;
  } cases[] = {
      {"", true, {}},
      {"training", true, {"training"}},
      {" training , research ,", true, {"training", "research"}},
      {"a,,b", true, {"a", "b"}},
      {"Training", false, {}},
      {"-x", false, {}},
      {"a/b", false, {}},
      {std::string(64, 'a'), false, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.text);
    std::vector<std::string> got;
    Status st = ParseNamespaceList(c.text, &got);
    EXPECT_EQ(st.ok(), c.ok) << st.message();
    if (c.ok) {
      EXPECT_EQ(got, c.want);
    }
    if (!c.ok) {
      EXPECT_NE(st.message().find("namespace"), std::string::npos);
    }
  }
}

nlohmann::json Pod(const std::string& name, const std::string& ns,
                   const std::string& node) {
  FakePod p;
  p.name = name;
  p.namespace_name = ns;
  p.node = node;
  p.containers[0].id = std::string(64, 'e');
  return p.Build();
}

std::vector<std::string> Keys(const PodTable& table) {
  std::vector<std::string> out;
  auto pods = table.Get();
  for (const auto& p : *pods) out.push_back(p.namespace_name + "/" + p.name);
  std::sort(out.begin(), out.end());
  return out;
}

TEST(PeerPodSourceTest, MergesTheNamespacesIntoOneTable) {
  FakeApiServer server;
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  server.AddPod(Pod("a-ps-0", "training", "n1"));
  server.AddPod(Pod("b-ps-0", "research", "n2"));
  server.AddPod(Pod("c-ps-0", "other", "n3"));
  ApiServerSourceOptions base;
  base.api_url = server.url();
  base.node_name = "n1";  // ignored: the queries name no node
  base.backoff_initial = 20ms;
  base.backoff_max = 100ms;
  PodTable table;
  {
    PeerPodSource source(base, PeerPodQueries("", {"training", "research"}),
                         table);
    EXPECT_EQ(source.name(), "apiserver-peers");
    ASSERT_TRUE(source.Start().ok());
    ASSERT_TRUE(WaitUntil([&] { return source.stats().ready; }));
    ASSERT_TRUE(WaitUntil([&] {
      return Keys(table) ==
             std::vector<std::string>{"research/b-ps-0", "training/a-ps-0"};
    }));
    EXPECT_GT(source.stats().last_success_unix_seconds, 0);
    ASSERT_TRUE(server.WaitForOpenWatches(2, 5s));
    server.DeletePod("research", "b-ps-0");
    server.AddPod(Pod("a-worker-0", "training", "n4"));
    ASSERT_TRUE(WaitUntil([&] {
      return Keys(table) ==
             std::vector<std::string>{"training/a-ps-0", "training/a-worker-0"};
    }));
    EXPECT_EQ(source.stats().errors_total, 0u);
  }
  server.Stop();
}

// The default watch: training pods of every node by their role labels,
// nothing else, kept as identity only, listed in pages.
TEST(PeerPodSourceTest, AutoSelectorsFindTrainingPodsOnly) {
  FakeApiServer server;
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  FakePod kubeflow;
  kubeflow.name = "ctr-ps-0";
  kubeflow.namespace_name = "training";
  kubeflow.node = "n2";
  kubeflow.pod_ip = "198.18.0.20";
  kubeflow.labels = {{"training.kubeflow.org/job-name", "ctr"},
                     {"training.kubeflow.org/replica-type", "ps"},
                     {"training.kubeflow.org/replica-index", "0"}};
  kubeflow.annotations = {{"note", std::string(1000, 'x')}};
  server.AddPod(kubeflow.Build());
  kubeflow.name = "ctr-worker-0";
  kubeflow.node = "n3";
  kubeflow.pod_ip = "198.18.0.21";
  kubeflow.labels["training.kubeflow.org/replica-type"] = "worker";
  server.AddPod(kubeflow.Build());
  FakePod seed;
  seed.name = "wide-worker-3";
  seed.namespace_name = "research";
  seed.node = "n3";
  seed.labels = {{"name", "wide"}, {"job", "worker"}, {"task", "3"}};
  server.AddPod(seed.Build());
  FakePod web;  // no role label: not a peer
  web.name = "web-7d9f";
  web.node = "n2";
  web.labels = {{"app", "web"}, {"job", "frontend"}};
  server.AddPod(web.Build());

  ApiServerSourceOptions base;
  base.api_url = server.url();
  base.backoff_initial = 20ms;
  base.list_page_size = 1;  // every pod on a page of its own
  PodTable table;
  PeerPodSource source(
      base,
      PeerPodQueries(ResolvePeerPodSelectors("auto", DefaultLabelSchemes()),
                     {}),
      table);
  ASSERT_TRUE(source.Start().ok());
  ASSERT_TRUE(WaitUntil([&] {
    return Keys(table) == std::vector<std::string>{"research/wide-worker-3",
                                                   "training/ctr-ps-0",
                                                   "training/ctr-worker-0"};
  }));
  // Held: the source's thread may replace (and free) the list meanwhile.
  const auto pods = table.Get();
  for (const auto& pod : *pods) {
    SCOPED_TRACE(pod.name);
    EXPECT_TRUE(pod.labels.empty());
    EXPECT_TRUE(pod.annotations.empty());
    EXPECT_TRUE(pod.containers.empty());
    EXPECT_FALSE(pod.node.empty());
    if (pod.name == "ctr-worker-0") continue;
    if (pod.name == "ctr-ps-0") {
      EXPECT_EQ(pod.role, Role::kPs);
      EXPECT_EQ(pod.training_job, "ctr");
      EXPECT_EQ(pod.pod_ip, "198.18.0.20");
    } else {
      EXPECT_EQ(pod.role, Role::kWorker);
      EXPECT_EQ(pod.training_job, "wide");
      EXPECT_EQ(pod.replica_index, 3);
    }
  }
  EXPECT_EQ(source.stats().errors_total, 0u);
  // The two Kubeflow pods came on pages of their own.
  size_t continued = 0;
  for (const auto& r : server.requests()) {
    if (r.params.count("continue")) ++continued;
  }
  EXPECT_GE(continued, 1u);
  source.Stop();
  server.Stop();
}

TEST(PeerPodSourceTest, NotReadyUntilEveryWatchListed) {
  FakeApiServer server;
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  // The first list (of one of the two watches) fails.
  server.FailNext(500, "boom", 1);
  ApiServerSourceOptions base;
  base.api_url = server.url();
  base.backoff_initial = 20ms;
  base.backoff_max = 40ms;
  PodTable table;
  PeerPodSource source(base, PeerPodQueries("", {"a", "b"}), table);
  ASSERT_TRUE(source.Start().ok());
  ASSERT_TRUE(WaitUntil([&] { return source.stats().errors_total >= 1; }));
  ASSERT_TRUE(WaitUntil([&] { return source.stats().ready; }));
  EXPECT_EQ(source.stats().errors_total, 1u);
  source.Stop();
  server.Stop();
}

TEST(PeerPodSourceTest, FactoryIsOffByDefaultAndNeedsApiserverMode) {
  auto env = [](const char*) -> std::optional<std::string> {
    return std::nullopt;
  };
  struct Case {
    DiscoveryMode mode;
    std::string selector;
    std::vector<std::string> namespaces;
    bool want_source;
    std::string want_error;
  } cases[] = {
      {DiscoveryMode::kApiServer, "", {}, false, ""},
      {DiscoveryMode::kFile, "", {}, false, ""},
      {DiscoveryMode::kApiServer, "job", {}, true, ""},
      {DiscoveryMode::kApiServer, "", {"training"}, true, ""},
      {DiscoveryMode::kFile, "job", {}, false, "--discovery apiserver"},
      {DiscoveryMode::kCgroup,
       "",
       {"training"},
       false,
       "--discovery apiserver"},
      // The agent's default: on with the API server, quietly off otherwise.
      {DiscoveryMode::kApiServer, "auto", {}, true, ""},
      {DiscoveryMode::kFile, "auto", {}, false, ""},
      {DiscoveryMode::kCgroup, "auto", {}, false, ""},
      {DiscoveryMode::kApiServer, "off", {}, false, ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(NameOfEnum(kDiscoveryModeNames, c.mode)) + " " +
                 c.selector);
    DiscoveryConfig config;
    config.mode = c.mode;
    config.kube_api = "http://127.0.0.1:1";
    config.peer_pods_selector = c.selector;
    config.peer_pods_namespaces = c.namespaces;
    PodTable table;
    Status error = Status::Ok();
    auto source = MakePeerPodSource(config, table, &error, env);
    EXPECT_EQ(source != nullptr, c.want_source);
    if (c.want_error.empty()) {
      EXPECT_TRUE(error.ok()) << error.message();
    } else {
      EXPECT_NE(error.message().find(c.want_error), std::string::npos)
          << error.message();
    }
    if (source) {
      EXPECT_EQ(source->name(), "apiserver-peers");
    }
  }
}

}  // namespace
}  // namespace trainscope
