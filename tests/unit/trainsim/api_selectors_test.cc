// The fake API server's selectors: what the agent's cluster-wide peer
// watch and the DaemonSet's node field selector rely on.
#include "api_selectors.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "fake_apiserver.h"

namespace trainscope::testing {
namespace {

using nlohmann::json;

json Labels() {
  return {{"training.kubeflow.org/job-name", "ctr"},
          {"training.kubeflow.org/replica-type", "ps"},
          {"job", "ps"},
          {"tier", "train"}};
}

TEST(LabelSelectorTest, Table) {
  struct Case {
    std::string selector;
    bool parses;
    bool matches;  // against Labels()
  } cases[] = {
      {"", true, true},
      {"training.kubeflow.org/job-name", true, true},
      {"tf-replica-type", true, false},
      {"!tf-replica-type", true, true},
      {"!job", true, false},
      {"job=ps", true, true},
      {"job==ps", true, true},
      {"job=worker", true, false},
      {"job!=worker", true, true},
      {"missing!=x", true, true},  // absent labels satisfy !=
      {"job in (ps,worker,chief,master,evaluator)", true, true},
      {"job in (worker, chief)", true, false},
      {"job notin (worker)", true, true},
      {"job notin (ps)", true, false},
      {"missing notin (ps)", true, true},
      {"missing in (ps)", true, false},
      {"training.kubeflow.org/job-name=ctr,job in (ps),tier", true, true},
      {"training.kubeflow.org/job-name=ctr,job in (worker)", true, false},
      {"job in (ps,worker", false, false},
      {"job in ()", false, false},
      {"job within (ps)", false, false},
      {"a,,b", false, false},
      {"=ps", false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.selector);
    std::vector<LabelTerm> terms;
    ASSERT_EQ(ParseLabelSelector(c.selector, &terms), c.parses);
    if (c.parses) {
      EXPECT_EQ(LabelsMatch(terms, Labels()), c.matches);
    }
  }
}

TEST(FieldSelectorTest, Table) {
  const json pod = {{"metadata", {{"name", "ctr-ps-0"}, {"namespace", "t"}}},
                    {"spec", {{"nodeName", "node-a"}}}};
  struct Case {
    std::string selector;
    bool parses;
    bool matches;
  } cases[] = {
      {"", true, true},
      {"spec.nodeName=node-a", true, true},
      {"spec.nodeName==node-a", true, true},
      {"spec.nodeName=node-b", true, false},
      {"spec.nodeName!=node-b", true, true},
      {"spec.nodeName!=node-a", true, false},
      {"spec.nodeName!=node-b,metadata.namespace=t", true, true},
      {"metadata.name=ctr-ps-0,spec.nodeName=node-b", true, false},
      {"status.phase=Running", false, false},
      {"spec.nodeName", false, false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.selector);
    std::vector<FieldTerm> terms;
    ASSERT_EQ(ParseFieldSelector(c.selector, &terms), c.parses);
    if (c.parses) {
      EXPECT_EQ(FieldsMatch(terms, pod), c.matches);
    }
  }
}

json Pod(const std::string& name, const std::string& node,
         const std::string& role) {
  return {{"kind", "Pod"},
          {"metadata",
           {{"name", name},
            {"namespace", "t"},
            {"labels", {{"job", role}, {"name", "ctr"}}}}},
          {"spec", {{"nodeName", node}}}};
}

std::vector<std::string> Names(const httplib::Result& res) {
  std::vector<std::string> out;
  if (!res || res->status != 200)
    return {"<status " + std::to_string(res ? res->status : 0) + ">"};
  const json list = json::parse(res->body);
  for (const auto& p : list["items"]) out.push_back(p["metadata"]["name"]);
  return out;
}

TEST(FakeApiSelectorsTest, ListAndWatchHonourBothSelectors) {
  FakeApiServerOptions o;
  o.watch_poll = std::chrono::milliseconds(10);
  FakeApiServer server(o);
  std::string error;
  ASSERT_TRUE(server.Start(&error)) << error;
  server.AddPod(Pod("ctr-ps-0", "node-a", "ps"));
  server.AddPod(Pod("ctr-worker-0", "node-a", "worker"));
  server.AddPod(Pod("ctr-worker-1", "node-b", "worker"));
  httplib::Client cli(server.url());
  cli.set_read_timeout(5, 0);
  using V = std::vector<std::string>;
  EXPECT_EQ(Names(cli.Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-b")),
            V{"ctr-worker-1"});
  EXPECT_EQ(
      Names(cli.Get("/api/v1/pods?fieldSelector=spec.nodeName%21%3Dnode-b")),
      (V{"ctr-ps-0", "ctr-worker-0"}));
  EXPECT_EQ(Names(cli.Get("/api/v1/pods?labelSelector=" +
                          httplib::detail::encode_query_param(
                              "name=ctr,job in (ps,chief)"))),
            V{"ctr-ps-0"});
  EXPECT_EQ(
      Names(cli.Get("/api/v1/pods?labelSelector=" +
                    httplib::detail::encode_query_param("job notin (ps)") +
                    "&fieldSelector=spec.nodeName%3Dnode-a")),
      V{"ctr-worker-0"});
  EXPECT_EQ(Names(cli.Get("/api/v1/pods?labelSelector=job%20in%20(ps")),
            V{"<status 400>"});

  // A watch with a set-based selector sees only matching events.
  auto res =
      cli.Get("/api/v1/pods?watch=true&timeoutSeconds=1&resourceVersion=" +
              std::to_string(server.resource_version()) + "&labelSelector=" +
              httplib::detail::encode_query_param("job in (worker)"));
  // (Events after the given version only: none yet, the stream ends at
  // timeoutSeconds.)
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "");
  const uint64_t rv = server.resource_version();
  server.AddPod(Pod("ctr-ps-1", "node-b", "ps"));
  server.AddPod(Pod("ctr-worker-2", "node-b", "worker"));
  res = cli.Get("/api/v1/pods?watch=true&timeoutSeconds=1&resourceVersion=" +
                std::to_string(rv) + "&labelSelector=" +
                httplib::detail::encode_query_param("job in (worker)") +
                "&fieldSelector=spec.nodeName%3Dnode-b");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("ctr-worker-2"), std::string::npos);
  EXPECT_EQ(res->body.find("ctr-ps-1"), std::string::npos);
}

}  // namespace
}  // namespace trainscope::testing
