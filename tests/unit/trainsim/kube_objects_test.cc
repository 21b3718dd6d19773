#include "kube_objects.h"

#include <gtest/gtest.h>

#include "pod_json.h"

namespace trainsim {
namespace {

using nlohmann::json;

class KubeObjectsTest : public ::testing::Test {
 protected:
  KubeObjectsTest()
      : scenario_(ParseScenarioText(
            R"({"name": "t", "nodes": [{"name": "node-a"}, {"name": "node-b"}],
            "jobs": [{"name": "ctr", "namespace": "training",
            "labels": "kubeflow", "layout": "ps_with_workers",
            "ps": 1, "workers": 2, "port": 2222,
            "resources": {"worker": {"cpu_limit_cores": 0.5}}}]})")),
        layout_(MakeLayout(scenario_, "0a1b2c3d")) {}

  json Pod(const std::string& name, const PodOverrides& overrides = {}) {
    return PodJson(layout_, *layout_.Find(name), overrides, "0",
                   "2026-01-01T00:00:00Z");
  }

  Scenario scenario_;
  Layout layout_;
};

TEST_F(KubeObjectsTest, CreateBodyLeavesWhatTheServerOwns) {
  const json pod = Pod("ctr-worker-1");
  const json body = PodCreateBody(pod);
  EXPECT_FALSE(body.contains("status"));
  for (const char* owned : {"uid", "resourceVersion", "creationTimestamp"})
    EXPECT_FALSE(body["metadata"].contains(owned)) << owned;
  // What the operator sets is all there.
  EXPECT_EQ(body["metadata"]["labels"], pod["metadata"]["labels"]);
  EXPECT_EQ(body["metadata"]["ownerReferences"][0]["kind"], "TFJob");
  EXPECT_EQ(body["metadata"]["namespace"], "training");
  EXPECT_EQ(body["spec"]["nodeName"], "node-b");
  EXPECT_EQ(body["spec"], pod["spec"]);
}

TEST_F(KubeObjectsTest, StatusPatchIsTheKubeletsStatus) {
  const json pod = Pod("ctr-worker-0");
  const json patch = PodStatusPatch(pod);
  ASSERT_EQ(patch.size(), 1u);
  const json& status = patch["status"];
  EXPECT_EQ(status["phase"], "Running");
  EXPECT_EQ(status["podIP"], layout_.Find("ctr-worker-0")->ip);
  EXPECT_EQ(status["hostIP"], NodeHostIp(0));
  const json& c = status["containerStatuses"][0];
  EXPECT_EQ(c["restartCount"], 0);
  EXPECT_EQ(c["state"]["running"]["startedAt"], "2026-01-01T00:00:00Z");
  // The API server allows an in-place resize only once the kubelet reports
  // the container's resources.
  EXPECT_EQ(c["resources"], pod["spec"]["containers"][0]["resources"]);
}

TEST_F(KubeObjectsTest, AnnotationChangesBecomeAMergePatch) {
  const json before = Pod("ctr-ps-0");
  EXPECT_FALSE(PodMetadataPatch(before, before).has_value());
  PodOverrides shaped;
  shaped.annotations["kubernetes.io/ingress-bandwidth"] = "80M";
  const json after = Pod("ctr-ps-0", shaped);
  auto patch = PodMetadataPatch(before, after);
  ASSERT_TRUE(patch.has_value());
  EXPECT_EQ(*patch, (json{{"metadata",
                           {{"annotations",
                             {{"kubernetes.io/ingress-bandwidth", "80M"}}}}}}));
  // Removing it again sends null, as a merge patch deletes a key.
  auto back = PodMetadataPatch(after, before);
  ASSERT_TRUE(back.has_value());
  EXPECT_TRUE(
      (*back)["metadata"]["annotations"]["kubernetes.io/ingress-bandwidth"]
          .is_null());
}

TEST_F(KubeObjectsTest, ResourceChangesBecomeAResizePatch) {
  const json before = Pod("ctr-worker-1");
  EXPECT_FALSE(PodResizePatch(before, before).has_value());
  PodOverrides limited;
  limited.cpu_limit_cores = 0.05;
  auto patch = PodResizePatch(before, Pod("ctr-worker-1", limited));
  ASSERT_TRUE(patch.has_value());
  const json& c = (*patch)["spec"]["containers"];
  ASSERT_EQ(c.size(), 1u);
  EXPECT_EQ(c[0]["name"], "tensorflow") << "keyed by name (strategic merge)";
  EXPECT_EQ(c[0]["resources"]["limits"]["cpu"], "50m");
  EXPECT_EQ(c[0]["resources"]["requests"]["cpu"], "25m");
}

TEST_F(KubeObjectsTest, NodeObjectAndStatus) {
  const json node = NodeCreateBody(layout_, 1);
  EXPECT_EQ(node["kind"], "Node");
  EXPECT_EQ(node["metadata"]["name"], "node-b");
  EXPECT_EQ(node["metadata"]["labels"]["kubernetes.io/hostname"], "node-b");
  const json status = NodeStatusPatch(layout_, 1, "2026-01-01T00:00:00Z");
  EXPECT_EQ(status["status"]["conditions"][0]["type"], "Ready");
  EXPECT_EQ(status["status"]["conditions"][0]["status"], "True");
  // The node's address is the hostIP of its pods.
  EXPECT_EQ(status["status"]["addresses"][0]["address"], NodeHostIp(1));
  EXPECT_EQ(Pod("ctr-worker-0")["status"]["hostIP"], NodeHostIp(0));
}

TEST_F(KubeObjectsTest, TokenRequest) {
  const json body = TokenRequestBody(3600);
  EXPECT_EQ(body["kind"], "TokenRequest");
  EXPECT_EQ(body["apiVersion"], "authentication.k8s.io/v1");
  EXPECT_EQ(body["spec"]["expirationSeconds"], 3600);
}

}  // namespace
}  // namespace trainsim
