// The fake API server is shared with trainsim, so its own contract is
// pinned here with a plain HTTP client.
#include "fake_apiserver.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <sstream>
#include <thread>
#include <tuple>

#include "pod_builder.h"

namespace trainscope::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

json Pod(const std::string& name, const std::string& node,
         std::map<std::string, std::string> labels = {},
         const std::string& namespace_name = "training") {
  FakePod p;
  p.name = name;
  p.namespace_name = namespace_name;
  p.node = node;
  p.labels = std::move(labels);
  return p.Build();
}

std::vector<std::string> Names(const httplib::Result& res) {
  std::vector<std::string> out;
  if (!res) return {"<request failed>"};
  if (res->status != 200) return {"<HTTP " + std::to_string(res->status) + ">"};
  const json list = json::parse(res->body);
  for (const auto& item : list["items"]) {
    out.push_back(item["metadata"]["name"].get<std::string>());
  }
  return out;
}

TEST(ParseLabelSelectorTest, Table) {
  using Op = LabelTerm::Op;
  struct Case {
    std::string selector;
    bool ok;
    std::vector<std::tuple<std::string, Op, std::string>> terms;
  } cases[] = {
      {"", true, {}},
      {"training.kubeflow.org/job-name",
       true,
       {{"training.kubeflow.org/job-name", Op::kExists, ""}}},
      {"!job", true, {{"job", Op::kNotExists, ""}}},
      {"job=ps,task==0,tier!=web",
       true,
       {{"job", Op::kEquals, "ps"},
        {"task", Op::kEquals, "0"},
        {"tier", Op::kNotEquals, "web"}}},
      {"job=", true, {{"job", Op::kEquals, ""}}},
      {"job in (ps,worker", false, {}},  // set-based: api_selectors_test
      {"a,,b", false, {}},
      {"=ps", false, {}},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.selector);
    std::vector<LabelTerm> terms;
    ASSERT_EQ(ParseLabelSelector(c.selector, &terms), c.ok);
    if (!c.ok) continue;
    ASSERT_EQ(terms.size(), c.terms.size());
    for (size_t i = 0; i < terms.size(); ++i) {
      EXPECT_EQ(terms[i].key, std::get<0>(c.terms[i]));
      EXPECT_EQ(terms[i].op, std::get<1>(c.terms[i]));
      std::string value = terms[i].value;
      for (const auto& v : terms[i].values) {
        value += (value.empty() ? "" : ",") + v;
      }
      EXPECT_EQ(value, std::get<2>(c.terms[i]));
    }
  }
}

class FakeApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeApiServerOptions o;
    o.required_token = "tok";
    o.watch_poll = 10ms;
    server_ = std::make_unique<FakeApiServer>(o);
    std::string error;
    ASSERT_TRUE(server_->Start(&error)) << error;
    server_->AddPod(Pod("a-ps-0", "n1"));
    server_->AddPod(Pod("a-worker-0", "n2"));
  }
  httplib::Result Get(const std::string& path,
                      const std::string& token = "tok") {
    httplib::Client client(server_->url());
    client.set_read_timeout(5, 0);
    httplib::Headers h;
    if (!token.empty()) h.emplace("Authorization", "Bearer " + token);
    return client.Get(path, h);
  }
  std::unique_ptr<FakeApiServer> server_;
};

TEST_F(FakeApiServerTest, ListFiltersByNodeAndCarriesTheVersion) {
  auto res = Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dn1");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json list = json::parse(res->body);
  EXPECT_EQ(list["kind"], "PodList");
  EXPECT_EQ(list["apiVersion"], "v1");
  EXPECT_EQ(list["metadata"]["resourceVersion"], "3");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "a-ps-0");
  EXPECT_EQ(list["items"][0]["metadata"]["resourceVersion"], "2");

  res = Get("/api/v1/pods");
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body)["items"].size(), 2u);
  res = Get("/api/v1/namespaces/other/pods");
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body)["items"].size(), 0u);
  res = Get("/api/v1/pods?fieldSelector=status.phase%3DRunning");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
}

TEST_F(FakeApiServerTest, ListFiltersByLabelSelectorAndNamespace) {
  server_->AddPod(Pod("k-ps-0", "n3",
                      {{"training.kubeflow.org/job-name", "k"},
                       {"training.kubeflow.org/replica-type", "ps"}}));
  server_->AddPod(Pod("k-worker-0", "n1",
                      {{"training.kubeflow.org/job-name", "k"},
                       {"training.kubeflow.org/replica-type", "worker"}},
                      "research"));
  EXPECT_EQ(Names(Get("/api/v1/pods?labelSelector=training.kubeflow.org%2F"
                      "job-name")),
            (std::vector<std::string>{"k-worker-0", "k-ps-0"}));
  EXPECT_EQ(Names(Get("/api/v1/pods?labelSelector=training.kubeflow.org%2F"
                      "replica-type%3Dps")),
            (std::vector<std::string>{"k-ps-0"}));
  EXPECT_EQ(Names(Get("/api/v1/pods?labelSelector=training.kubeflow.org%2F"
                      "replica-type%21%3Dps")),
            (std::vector<std::string>{"k-worker-0", "a-ps-0", "a-worker-0"}));
  EXPECT_EQ(Names(Get("/api/v1/pods?labelSelector=%21training.kubeflow.org%2F"
                      "job-name")),
            (std::vector<std::string>{"a-ps-0", "a-worker-0"}));
  EXPECT_EQ(Names(Get("/api/v1/namespaces/research/pods")),
            (std::vector<std::string>{"k-worker-0"}));
  EXPECT_EQ(Names(Get("/api/v1/namespaces/training/pods?labelSelector="
                      "training.kubeflow.org%2Fjob-name")),
            (std::vector<std::string>{"k-ps-0"}));
  // Node, namespace and labels combine.
  EXPECT_EQ(Names(Get("/api/v1/namespaces/training/pods?fieldSelector="
                      "spec.nodeName%3Dn1&labelSelector=training.kubeflow.org"
                      "%2Fjob-name")),
            (std::vector<std::string>{}));
  // Set-based terms, as the agent's default peer watch sends them.
  EXPECT_EQ(Names(Get("/api/v1/pods?labelSelector=training.kubeflow.org%2F"
                      "replica-type%20in%20(ps%2Cchief)")),
            (std::vector<std::string>{"k-ps-0"}));
  auto res = Get("/api/v1/pods?labelSelector=job%20in%20(ps");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
}

TEST_F(FakeApiServerTest, WatchFiltersByLabelSelectorAndNamespace) {
  std::thread changer([&] {
    ASSERT_TRUE(server_->WaitForOpenWatches(1, 5s));
    server_->AddPod(Pod("k-ps-0", "n3", {{"job", "ps"}}));
    server_->AddPod(Pod("k-ps-1", "n3", {{"job", "ps"}}, "research"));
    server_->AddPod(Pod("k-worker-0", "n3", {{"job", "worker"}}));
    server_->DeletePod("training", "k-ps-0");
  });
  auto res =
      Get("/api/v1/namespaces/training/pods?watch=true&resourceVersion=0&"
          "timeoutSeconds=1&labelSelector=job%3Dps");
  changer.join();
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  std::vector<std::string> seen;
  std::istringstream lines(res->body);
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line);
    seen.push_back(e["type"].get<std::string>() + " " +
                   e["object"]["metadata"]["name"].get<std::string>());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED k-ps-0", "DELETED k-ps-0"}));
}

TEST_F(FakeApiServerTest, GetOnePod) {
  auto res = Get("/api/v1/namespaces/training/pods/a-worker-0");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["spec"]["nodeName"], "n2");
  res = Get("/api/v1/namespaces/training/pods/nope");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  json status = json::parse(res->body);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["reason"], "NotFound");
}

TEST_F(FakeApiServerTest, AuthAndInjectedFailures) {
  auto res = Get("/api/v1/pods", "");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = Get("/api/v1/pods", "wrong");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  server_->FailNext(503, "down", 2);
  for (int i = 0; i < 2; ++i) {
    res = Get("/api/v1/pods");
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 503);
    EXPECT_EQ(res->body, "down");
  }
  res = Get("/api/v1/pods");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  auto log = server_->requests();
  ASSERT_EQ(log.size(), 5u);
  EXPECT_EQ(log[0].authorization, "");
  EXPECT_EQ(log[2].injected_status, 503);
  EXPECT_EQ(log[4].injected_status, 0);
}

TEST_F(FakeApiServerTest, WatchStreamsEventsAndEndsAtTimeout) {
  // From version 0: the current pods as ADDED, then live changes, until
  // timeoutSeconds ends the stream cleanly.
  std::thread changer([&] {
    ASSERT_TRUE(server_->WaitForOpenWatches(1, 5s));
    server_->AddPod(Pod("a-worker-1", "n1"));
    server_->AddPod(Pod("b-worker-0", "n2"));  // other node: filtered
    server_->DeletePod("training", "a-ps-0");
  });
  auto res =
      Get("/api/v1/pods?watch=true&resourceVersion=0&timeoutSeconds=1&"
          "fieldSelector=spec.nodeName%3Dn1");
  changer.join();
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  std::vector<std::string> seen;
  std::istringstream lines(res->body);
  for (std::string line; std::getline(lines, line);) {
    json e = json::parse(line);
    seen.push_back(e["type"].get<std::string>() + " " +
                   e["object"]["metadata"]["name"].get<std::string>());
  }
  EXPECT_EQ(seen, (std::vector<std::string>{"ADDED a-ps-0", "ADDED a-worker-1",
                                            "DELETED a-ps-0"}));
  EXPECT_TRUE(server_->WaitForOpenWatches(0, 1s));
}

TEST_F(FakeApiServerTest, WatchReplaysFromAVersionAndExpiresAfterCompaction) {
  server_->AddPod(Pod("a-worker-1", "n1"));  // version 4
  server_->EndWatches();                     // nothing open; no effect
  auto res = Get("/api/v1/pods?watch=true&resourceVersion=3&timeoutSeconds=0");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body.find("a-ps-0"), std::string::npos);
  EXPECT_NE(res->body.find("\"ADDED\""), std::string::npos);
  EXPECT_NE(res->body.find("a-worker-1"), std::string::npos);

  server_->Compact();
  res = Get("/api/v1/pods?watch=true&resourceVersion=3&timeoutSeconds=5");
  ASSERT_TRUE(res);
  json e = json::parse(res->body);
  EXPECT_EQ(e["type"], "ERROR");
  EXPECT_EQ(e["object"]["code"], 410);
  EXPECT_EQ(e["object"]["reason"], "Expired");
}

TEST_F(FakeApiServerTest, RestartKeepsPortAndPods) {
  const int port = server_->port();
  server_->Stop();
  EXPECT_FALSE(server_->running());
  httplib::Client client(server_->url());
  EXPECT_FALSE(client.Get("/api/v1/pods"));
  std::string error;
  ASSERT_TRUE(server_->Restart(&error)) << error;
  EXPECT_EQ(server_->port(), port);
  auto res = Get("/api/v1/pods");
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body)["items"].size(), 2u);
}

}  // namespace
}  // namespace trainscope::testing
