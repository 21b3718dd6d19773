#include <gtest/gtest.h>

#include "discovery/api_endpoint.h"
#include "discovery/pod_json.h"
#include "discovery/watch_event.h"
#include "pod_builder.h"

namespace trainscope {
namespace {

using nlohmann::json;
using testing::FakeContainer;
using testing::FakePod;

TEST(SplitContainerIdTest, Table) {
  struct Case {
    std::string in, runtime, id;
  } cases[] = {
      {"containerd://abc123", "containerd", "abc123"},
      {"cri-o://def456", "cri-o", "def456"},
      {"docker://0123", "docker", "0123"},
      {"bare", "", "bare"},
      {"", "", ""},
  };
  for (const auto& c : cases) {
    std::string runtime, id;
    SplitContainerId(c.in, &runtime, &id);
    EXPECT_EQ(runtime, c.runtime) << c.in;
    EXPECT_EQ(id, c.id) << c.in;
  }
}

TEST(ParsePodTest, RealisticPod) {
  FakePod p;
  p.name = "ctr-worker-3";
  p.namespace_name = "training";
  p.uid = "1f8a6c1e-5c0e-4b8e-9d55-2b7e7b0f6a11";
  p.node = "node-a";
  p.pod_ip = "10.244.1.7";
  p.labels = {{"app", "ctr"}};
  p.annotations = {{"kubernetes.io/egress-bandwidth", "1G"}};
  p.tf_config = R"({"task":{"type":"worker","index":3}})";
  p.containers = {
      FakeContainer{"tensorflow", std::string(64, 'a'), "containerd", "500m",
                    "512Mi"},
      FakeContainer{"sidecar", std::string(64, 'b'), "containerd", "1.5", "1G"},
  };
  p.owner_kind = "TFJob";
  p.owner_name = "ctr";
  PodInfo pod;
  ASSERT_TRUE(ParsePod(p.Build(), &pod).ok());
  EXPECT_EQ(pod.name, "ctr-worker-3");
  EXPECT_EQ(pod.namespace_name, "training");
  EXPECT_EQ(pod.uid, p.uid);
  EXPECT_EQ(pod.node, "node-a");
  EXPECT_EQ(pod.phase, "Running");
  EXPECT_EQ(pod.pod_ip, "10.244.1.7");
  EXPECT_EQ(pod.pod_ips, std::vector<std::string>{"10.244.1.7"});
  EXPECT_FALSE(pod.host_network);
  EXPECT_EQ(pod.labels.at("app"), "ctr");
  EXPECT_EQ(pod.annotations.at("kubernetes.io/egress-bandwidth"), "1G");
  EXPECT_EQ(pod.tf_config, p.tf_config);
  ASSERT_EQ(pod.containers.size(), 2u);
  EXPECT_EQ(pod.containers[0].name, "tensorflow");
  EXPECT_EQ(pod.containers[0].id, std::string(64, 'a'));
  EXPECT_EQ(pod.containers[0].runtime, "containerd");
  ASSERT_TRUE(pod.spec_cpu_limit_cores);
  EXPECT_DOUBLE_EQ(*pod.spec_cpu_limit_cores, 2.0);
  ASSERT_TRUE(pod.spec_memory_limit_bytes);
  EXPECT_EQ(*pod.spec_memory_limit_bytes, 536870912u + 1000000000u);
  EXPECT_EQ(pod.role, Role::kUnknown);  // identity is roles.h's business
}

// Found by fuzz.pod_list (UBSan): the sum was converted to uint64_t however
// large, undefined beyond 2^64. A limit no kubelet can represent is none.
TEST(ParsePodTest, MemoryLimitBeyondInt64IsNoLimit) {
  FakePod p;
  p.name = "x";
  p.containers = {FakeContainer{"a", "", "containerd", "1", "1e42"}};
  PodInfo pod;
  ASSERT_TRUE(ParsePod(p.Build(), &pod).ok());
  EXPECT_FALSE(pod.spec_memory_limit_bytes);
  ASSERT_TRUE(pod.spec_cpu_limit_cores);
}

TEST(ParsePodTest, LimitsOnlyWhenEveryContainerSetsOne) {
  FakePod p;
  p.name = "x";
  p.containers = {FakeContainer{"a", "", "containerd", "1", ""},
                  FakeContainer{"b", "", "containerd", "", "1Gi"}};
  PodInfo pod;
  ASSERT_TRUE(ParsePod(p.Build(), &pod).ok());
  EXPECT_FALSE(pod.spec_cpu_limit_cores);
  EXPECT_FALSE(pod.spec_memory_limit_bytes);
  // Not started yet: no containerID.
  ASSERT_EQ(pod.containers.size(), 2u);
  EXPECT_EQ(pod.containers[0].id, "");
}

TEST(ParsePodTest, MinimalPodAndOptionalFields) {
  json pod = {{"metadata", {{"name", "p"}, {"uid", "u1"}}}};
  PodInfo info;
  ASSERT_TRUE(ParsePod(pod, &info).ok());
  EXPECT_EQ(info.name, "p");
  EXPECT_EQ(info.namespace_name, "");
  EXPECT_TRUE(info.containers.empty());
  EXPECT_FALSE(info.spec_cpu_limit_cores);
}

TEST(ParsePodTest, StatusDetails) {
  json pod = json::parse(R"({
    "metadata": {"name": "ps", "uid": "u", "labels": null},
    "spec": {"hostNetwork": true, "nodeName": "n1",
             "initContainers": [{"name": "init"}],
             "containers": [{"name": "c", "env": [{"name": "A"},
               {"name": "TF_CONFIG", "valueFrom": {"configMapKeyRef": {}}}]}]},
    "status": {"phase": "Pending", "podIP": "10.0.0.5",
      "podIPs": [{"ip": "10.0.0.5"}, {"ip": "fd00::5"}],
      "initContainerStatuses": [{"name": "init", "containerID": "containerd://init"}],
      "containerStatuses": [
        {"name": "c", "containerID": "cri-o://ccc"},
        {"name": "d", "containerID": "docker://ddd"}]}
  })");
  PodInfo info;
  ASSERT_TRUE(ParsePod(pod, &info).ok());
  EXPECT_TRUE(info.host_network);
  EXPECT_EQ(info.phase, "Pending");
  EXPECT_EQ(info.pod_ips, (std::vector<std::string>{"10.0.0.5", "fd00::5"}));
  EXPECT_EQ(info.tf_config, "");  // valueFrom is not resolvable here
  ASSERT_EQ(info.containers.size(), 2u);
  EXPECT_EQ(info.containers[0].runtime, "cri-o");
  EXPECT_EQ(info.containers[0].id, "ccc");
  EXPECT_EQ(info.containers[1].runtime, "docker");
  EXPECT_EQ(info.containers[1].id, "ddd");
}

struct BadPodCase {
  std::string json_text;
  std::string field;  // must appear in the error message
};

TEST(ParsePodTest, ErrorsNameTheField) {
  const BadPodCase cases[] = {
      {R"([])", "pod: expected object"},
      {R"({})", "metadata: missing"},
      {R"({"metadata": {"uid": "u"}})", "metadata.name: missing"},
      {R"({"metadata": {"name": "p"}})", "metadata.uid: missing"},
      {R"({"metadata": {"name": 5, "uid": "u"}})",
       "metadata.name: expected string"},
      {R"({"metadata": {"name": "p", "uid": "u", "labels": {"a": 1}}})",
       "metadata.labels.a: expected string"},
      {R"({"metadata": {"name": "p", "uid": "u"}, "spec": []})",
       "spec: expected object"},
      {R"({"metadata": {"name": "p", "uid": "u"}, "spec": {"hostNetwork": "yes"}})",
       "spec.hostNetwork: expected boolean"},
      {R"({"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": {}}})",
       "spec.containers: expected array"},
      {R"({"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": [
          {"name": "a", "resources": {"limits": {"cpu": "lots"}}}]}})",
       "spec.containers[0].resources.limits.cpu: bad quantity \"lots\""},
      {R"({"metadata": {"name": "p", "uid": "u"}, "spec": {"containers": [
          {"name": "a", "env": [{"name": "X", "value": 3}]}]}})",
       "spec.containers[0].env[0].value: expected string"},
      {R"({"metadata": {"name": "p", "uid": "u"}, "status": {"podIPs": [1]}})",
       "status.podIPs[0]: expected object"},
      {R"({"metadata": {"name": "p", "uid": "u"},
           "status": {"containerStatuses": [{"containerID": 7}]}})",
       "status.containerStatuses[0].containerID: expected string"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.json_text);
    PodInfo info;
    Status st = ParsePod(json::parse(c.json_text), &info);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(c.field), std::string::npos) << st.message();
  }
}

TEST(ParsePodListTest, ListWithResourceVersion) {
  FakePod a, b;
  a.name = "a";
  b.name = "b";
  b.namespace_name = "ns2";
  const std::string body =
      testing::BuildPodList({a.Build(), b.Build()}, "4711").dump();
  PodList pods;
  std::string rv;
  ASSERT_TRUE(ParsePodList(body, &pods, &rv).ok());
  EXPECT_EQ(rv, "4711");
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[1].namespace_name, "ns2");
}

TEST(ParsePodListTest, Errors) {
  const std::pair<std::string, std::string> cases[] = {
      {"{not json", "malformed JSON"},
      {"", "malformed JSON"},
      {"[]", "expected object"},
      {R"({"items": {}})", "items: expected array"},
      {R"({"metadata": {"resourceVersion": 5}, "items": []})",
       "metadata.resourceVersion: expected string"},
      {R"({"items": [{"metadata": {"name": "ok", "uid": "1"}},
                      {"metadata": {"name": "bad"}}]})",
       "items[1]: metadata.uid: missing"},
      // Found by fuzz.pod_list: out_of_range, not parse_error, escaped.
      {R"({"items": [], "x": 577e733})", "malformed JSON"},
  };
  for (const auto& [body, want] : cases) {
    SCOPED_TRACE(body);
    PodList pods;
    std::string rv;
    Status st = ParsePodList(body, &pods, &rv);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find(want), std::string::npos) << st.message();
  }
  PodList pods;
  ASSERT_TRUE(ParsePodList(R"({"items": null})", &pods, nullptr).ok());
  EXPECT_TRUE(pods.empty());
}

TEST(ApiEndpointTest, ParseUrl) {
  struct Case {
    std::string url;
    bool ok;
    std::string origin, base;
  } cases[] = {
      {"https://10.96.0.1:443", true, "https://10.96.0.1:443", ""},
      {"https://kubernetes.default.svc", true,
       "https://kubernetes.default.svc:443", ""},
      {"http://127.0.0.1:8001/", true, "http://127.0.0.1:8001", ""},
      {"http://proxy:80/k8s/api/", true, "http://proxy:80", "/k8s/api"},
      {"https://[fd00::1]:6443", true, "https://[fd00::1]:6443", ""},
      {"ftp://x", false, "", ""},
      {"127.0.0.1:8080", false, "", ""},
      {"http://:80", false, "", ""},
      {"http://h:99999", false, "", ""},
      {"http://h:x", false, "", ""},
      {"http://u:p@h", false, "", ""},
      {"http://h/p?q=1", false, "", ""},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.url);
    ApiEndpoint e;
    Status st = ParseApiUrl(c.url, &e);
    ASSERT_EQ(st.ok(), c.ok) << st.message();
    if (!c.ok) {
      EXPECT_NE(st.message().find(c.url), std::string::npos);
      continue;
    }
    EXPECT_EQ(e.Origin(), c.origin);
    EXPECT_EQ(e.base_path, c.base);
  }
}

TEST(ApiEndpointTest, PodsPath) {
  ApiEndpoint e;
  ASSERT_TRUE(ParseApiUrl("http://h:1/pre", &e).ok());
  EXPECT_EQ(PodsPath(e, "node-a", ""),
            "/pre/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-a");
  EXPECT_EQ(PodsPath(e, "", "watch=true"), "/pre/api/v1/pods?watch=true");
  EXPECT_EQ(PodsPath(e, "", ""), "/pre/api/v1/pods");
  EXPECT_EQ(UrlEncode("a b/c=d"), "a%20b%2Fc%3Dd");
}

TEST(ApiEndpointTest, PodsPathForAQuery) {
  ApiEndpoint e;
  ASSERT_TRUE(ParseApiUrl("http://h:1", &e).ok());
  struct Case {
    PodsQuery query;
    std::string extra;
    std::string want;
  } cases[] = {
      {{}, "", "/api/v1/pods"},
      {{"", "", "training.kubeflow.org/job-name"},
       "",
       "/api/v1/pods?labelSelector=training.kubeflow.org%2Fjob-name"},
      {{"", "", "app=ps,tier!=web"},
       "watch=true",
       "/api/v1/pods?labelSelector=app%3Dps%2Ctier%21%3Dweb&watch=true"},
      {{"", "training", ""}, "", "/api/v1/namespaces/training/pods"},
      {{"", "training", "job"},
       "watch=true",
       "/api/v1/namespaces/training/pods?labelSelector=job&watch=true"},
      {{"n1", "training", "job"},
       "",
       "/api/v1/namespaces/training/pods?fieldSelector=spec.nodeName%3Dn1&"
       "labelSelector=job"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.want);
    EXPECT_EQ(PodsPath(e, c.query, c.extra), c.want);
  }
}

TEST(WatchEventTest, Table) {
  struct Case {
    std::string line;
    bool ok;
    std::string type_or_error;
    int code = 0;
  } cases[] = {
      {R"({"type":"ADDED","object":{"metadata":{}}})", true, "ADDED"},
      {R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"9"}}})",
       true, "BOOKMARK"},
      {R"({"type":"ERROR","object":{"kind":"Status","code":410,"message":"too old"}})",
       true, "ERROR", 410},
      {R"({"type":"ADDED"})", false, "missing object"},
      {R"({"object":{}})", false, "missing string field \"type\""},
      {R"({"type":"SNAPSHOT","object":{}})", false, "unknown type"},
      {R"({"type":"ADDED","object":{)", false, "malformed JSON"},
      {R"(42)", false, "not an object"},
      // Found by fuzz.watch_event: a number beyond double's range threw
      // out_of_range (not parse_error) out of the watch thread.
      {R"({"type":"ADDED","object":{"x":5555.55E8999}})", false,
       "malformed JSON"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.line);
    WatchEvent e;
    Status st = ParseWatchEvent(c.line, &e);
    ASSERT_EQ(st.ok(), c.ok) << st.message();
    if (c.ok) {
      EXPECT_EQ(e.type, c.type_or_error);
      EXPECT_EQ(e.error_code, c.code);
    } else {
      EXPECT_NE(st.message().find(c.type_or_error), std::string::npos)
          << st.message();
    }
  }
}

TEST(LineSplitterTest, SplitsAcrossChunks) {
  LineSplitter splitter;
  std::vector<std::string> lines;
  auto collect = [&](std::string_view l) {
    lines.emplace_back(l);
    return true;
  };
  EXPECT_TRUE(splitter.Feed("{\"a\":", collect));
  EXPECT_TRUE(lines.empty());
  EXPECT_TRUE(splitter.Feed("1}\n\n{\"b\":2}\r\n{\"c\"", collect));
  EXPECT_EQ(lines, (std::vector<std::string>{"{\"a\":1}", "{\"b\":2}"}));
  EXPECT_TRUE(splitter.Feed(":3}\n", collect));
  EXPECT_EQ(lines.back(), "{\"c\":3}");
  // A false from the callback stops at that line.
  int seen = 0;
  EXPECT_FALSE(splitter.Feed("x\ny\n", [&](std::string_view) {
    ++seen;
    return false;
  }));
  EXPECT_EQ(seen, 1);
}

}  // namespace
}  // namespace trainscope
