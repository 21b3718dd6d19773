#include "report/report_json.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

PodList Pods() {
  PodList pods;
  auto add = [&](std::string name, Role role, int index, std::string job) {
    PodInfo p;
    p.uid = name + "-uid";
    p.namespace_name = "training";
    p.name = std::move(name);
    p.role = role;
    p.replica_index = index;
    p.training_job = std::move(job);
    p.containers.push_back({"tensorflow", "abc", "containerd"});
    pods.push_back(std::move(p));
  };
  add("ctr-ps-1", Role::kPs, 1, "ctr");
  add("ctr-ps-0", Role::kPs, 0, "ctr");
  add("ctr-worker-0", Role::kWorker, 0, "ctr");
  add("web", Role::kUnknown, -1, "");
  return pods;
}

TEST(ReportViewTest, MatchesTheDesignSchema) {
  auto report = ReportView("node-a", Pods(), nlohmann::json::array(),
                           std::chrono::system_clock::from_time_t(0));
  EXPECT_EQ(report["generated_at"], "1970-01-01T00:00:00Z");
  EXPECT_EQ(report["node"], "node-a");
  EXPECT_TRUE(report["diagnoses"].is_array());
  ASSERT_EQ(report["jobs"].size(), 1u);
  const auto& job = report["jobs"][0];
  EXPECT_EQ(job["namespace"], "training");
  EXPECT_EQ(job["training_job"], "ctr");
  EXPECT_EQ(job["ps"], nlohmann::json({"ctr-ps-0", "ctr-ps-1"}));
  EXPECT_EQ(job["workers"], nlohmann::json({"ctr-worker-0"}));
  EXPECT_TRUE(job["ps_traffic_share"].is_object());
  std::string text = ReportText(report);
  EXPECT_NE(text.find("No active diagnoses"), std::string::npos);
  EXPECT_NE(text.find("training/ctr: 2 PS, 1 workers"), std::string::npos);
}

TEST(PodsViewTest, JoinsCgroupPathsFromTheLatestSample) {
  PodList pods = Pods();
  Snapshot snap;
  snap.pod_samples["ctr-ps-0-uid"].cgroup_path = "kubepods/podX";
  snap.pod_samples["ctr-ps-0-uid"].containers.push_back(
      {.name = "tensorflow", .id = "abc", .cgroup_path = "kubepods/podX/abc"});
  auto view = PodsView(pods, &snap);
  ASSERT_EQ(view["pods"].size(), 4u);
  const auto& ps0 = view["pods"][1];
  EXPECT_EQ(ps0["name"], "ctr-ps-0");
  EXPECT_EQ(ps0["role"], "ps");
  EXPECT_EQ(ps0["cgroup_path"], "kubepods/podX");
  EXPECT_EQ(ps0["containers"][0]["cgroup_path"], "kubepods/podX/abc");
  EXPECT_TRUE(view["pods"][3]["replica_index"].is_null());
  EXPECT_TRUE(view["pods"][0]["cgroup_path"].is_null());
}

}  // namespace
}  // namespace trainscope
