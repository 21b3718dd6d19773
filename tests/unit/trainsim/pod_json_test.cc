#include "pod_json.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include "fake_apiserver.h"

namespace trainsim {
namespace {

using nlohmann::json;

Scenario Make(const std::string& labels) {
  return ParseScenarioText(
      R"({"name": "t", "jobs": [{"name": "ctr", "namespace": "training",
      "labels": ")" +
      labels + R"(", "ps": 2, "workers": 2, "port": 2222,
      "resources": {"ps": {"cpu_limit_cores": 1.5, "memory_limit_bytes": 268435456},
                    "worker": {"cpu_limit_cores": 0.5}}}]})");
}

TEST(PodJsonTest, Quantities) {
  EXPECT_EQ(CpuQuantity(0.5), "500m");
  EXPECT_EQ(CpuQuantity(2), "2");
  EXPECT_EQ(CpuQuantity(0.05), "50m");
  EXPECT_EQ(CpuQuantity(0.0001), "1m");
  EXPECT_EQ(MemoryQuantity(268435456), "256Mi");
  EXPECT_EQ(MemoryQuantity(1ULL << 30), "1Gi");
  EXPECT_EQ(MemoryQuantity(3072), "3Ki");
  EXPECT_EQ(MemoryQuantity(1000), "1000");
}

TEST(PodJsonTest, CommonShape) {
  Scenario s = Make("kubeflow");
  Layout l = MakeLayout(s, "0a1b2c3d");
  const SimPod& p = *l.Find("ctr-ps-1");
  json j = PodJson(l, p, {}, "7", "2026-01-01T00:00:00Z");
  EXPECT_EQ(j["kind"], "Pod");
  EXPECT_EQ(j["metadata"]["name"], "ctr-ps-1");
  EXPECT_EQ(j["metadata"]["namespace"], "training");
  EXPECT_EQ(j["metadata"]["uid"], p.uid);
  EXPECT_EQ(j["spec"]["nodeName"], "trainsim-0a1b2c3d");
  EXPECT_EQ(j["status"]["phase"], "Running");
  EXPECT_EQ(j["status"]["podIP"], p.ip);
  EXPECT_EQ(j["status"]["podIPs"][0]["ip"], p.ip);
  EXPECT_EQ(j["status"]["qosClass"], "Burstable");
  EXPECT_EQ(j["status"]["containerStatuses"][0]["containerID"],
            "containerd://" + p.container_id);
  EXPECT_EQ(j["status"]["containerStatuses"][0]["restartCount"], 0);
  const json& c = j["spec"]["containers"][0];
  EXPECT_EQ(c["resources"]["limits"]["cpu"], "1500m");
  EXPECT_EQ(c["resources"]["limits"]["memory"], "256Mi");
  EXPECT_EQ(c["resources"]["requests"]["memory"], "128Mi");
  EXPECT_EQ(c["ports"][0]["containerPort"], 2222);
  // Worker: CPU limit only.
  json w = PodJson(l, *l.Find("ctr-worker-0"), {}, "7", "x");
  EXPECT_EQ(w["spec"]["containers"][0]["resources"]["limits"],
            json({{"cpu", "500m"}}));
}

TEST(PodJsonTest, LabelStyles) {
  struct Case {
    std::string style;
    json labels;
    bool tf_config;
    std::string owner_kind;
  };
  const std::vector<Case> cases = {
      {"kubeflow",
       {{"training.kubeflow.org/job-name", "ctr"},
        {"training.kubeflow.org/operator-name", "tfjob-controller"},
        {"training.kubeflow.org/replica-type", "worker"},
        {"training.kubeflow.org/replica-index", "1"}},
       true,
       "TFJob"},
      {"seed",
       {{"name", "ctr"}, {"job", "worker"}, {"task", "1"}},
       false,
       "Job"},
      {"tf_config", json::object(), true, ""},
      {"name_only", json::object(), false, ""},
      {"jobset",
       {{"jobset.sigs.k8s.io/jobset-name", "ctr"},
        {"jobset.sigs.k8s.io/replicatedjob-name", "worker"},
        {"jobset.sigs.k8s.io/replicatedjob-replicas", "1"},
        {"jobset.sigs.k8s.io/job-index", "0"},
        {"batch.kubernetes.io/job-completion-index", "1"}},
       false,
       "Job"},
      {"volcano",
       {{"volcano.sh/job-name", "ctr"},
        {"volcano.sh/task-spec", "worker"},
        {"volcano.sh/task-index", "1"}},
       false,
       "Job"},
  };
  for (const Case& c : cases) {
    Scenario s = Make(c.style);
    Layout l = MakeLayout(s, "0a1b2c3d");
    json j = PodJson(l, *l.Find("ctr-worker-1"), {}, "1", "x");
    EXPECT_EQ(j["metadata"]["labels"], c.labels) << c.style;
    const json& env = j["spec"]["containers"][0]["env"];
    EXPECT_EQ(env.size(), c.tf_config ? 1u : 0u) << c.style;
    if (c.tf_config) {
      EXPECT_EQ(env[0]["name"], "TF_CONFIG");
      json tf = json::parse(env[0]["value"].get<std::string>());
      EXPECT_EQ(tf["task"], json({{"type", "worker"}, {"index", 1}}));
      EXPECT_EQ(tf["cluster"]["ps"], json({"ctr-ps-0.training.svc:2222",
                                           "ctr-ps-1.training.svc:2222"}));
      EXPECT_EQ(tf["cluster"]["worker"].size(), 2u);
    }
    if (c.owner_kind.empty())
      EXPECT_FALSE(j["metadata"].contains("ownerReferences")) << c.style;
    else
      EXPECT_EQ(j["metadata"]["ownerReferences"][0]["kind"], c.owner_kind)
          << c.style;
  }
}

TEST(PodJsonTest, FaultOverrides) {
  Scenario s = Make("kubeflow");
  Layout l = MakeLayout(s, "0a1b2c3d");
  PodOverrides o;
  o.cpu_limit_cores = 0.05;
  o.annotations["kubernetes.io/ingress-bandwidth"] = "10M";
  json j = PodJson(l, *l.Find("ctr-worker-0"), o, "1", "x");
  EXPECT_EQ(j["spec"]["containers"][0]["resources"]["limits"]["cpu"], "50m");
  EXPECT_EQ(j["metadata"]["annotations"]["kubernetes.io/ingress-bandwidth"],
            "10M");
}

// The pods as trainsim serves them: list with the node's field selector,
// and a single GET.
TEST(PodJsonTest, ServedByTheApiServer) {
  Scenario s = Make("seed");
  Layout l = MakeLayout(s, "0a1b2c3d");
  trainscope::testing::FakeApiServer api;
  ASSERT_TRUE(api.Start());
  for (const SimPod& p : l.pods) api.AddPod(PodJson(l, p, {}, "0", "x"));
  httplib::Client cli("127.0.0.1", api.port());
  auto res =
      cli.Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dtrainsim-0a1b2c3d");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json list = json::parse(res->body);
  EXPECT_EQ(list["kind"], "PodList");
  EXPECT_EQ(list["items"].size(), 4u);
  res = cli.Get("/api/v1/pods?fieldSelector=spec.nodeName%3Dother-node");
  ASSERT_TRUE(res);
  EXPECT_EQ(json::parse(res->body)["items"].size(), 0u);
  res = cli.Get("/api/v1/namespaces/training/pods/ctr-worker-1");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json pod = json::parse(res->body);
  EXPECT_EQ(pod["metadata"]["uid"], l.Find("ctr-worker-1")->uid);
  EXPECT_EQ(pod["metadata"]["labels"]["task"], "1");
  api.Stop();
}

}  // namespace
}  // namespace trainsim
