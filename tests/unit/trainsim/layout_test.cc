#include "layout.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "cgroups.h"

namespace trainsim {
namespace {

Scenario TwoJobs() {
  return ParseScenarioText(R"({"name": "t", "jobs": [
      {"name": "a", "ps": 2, "workers": 3},
      {"name": "b", "namespace": "other", "ps": 1, "workers": 1}]})");
}

TEST(LayoutTest, NamesAddressesAndIds) {
  Scenario s = TwoJobs();
  Layout l = MakeLayout(s, "0a1b2c3d");
  ASSERT_EQ(l.pods.size(), 7u);
  EXPECT_EQ(l.node_name, "trainsim-0a1b2c3d");
  EXPECT_EQ(l.bridge, "ts0a1b2c3dbr");
  const std::vector<std::string> names = {
      "a-ps-0",     "a-ps-1", "a-worker-0", "a-worker-1",
      "a-worker-2", "b-ps-0", "b-worker-0"};
  std::set<std::string> ips, uids, cids;
  const std::regex uuid(
      "^0a1b2c3d-7531-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$");
  const std::regex hex64("^[0-9a-f]{64}$");
  for (size_t i = 0; i < names.size(); ++i) {
    const SimPod& p = l.pods[i];
    EXPECT_EQ(p.name, names[i]);
    EXPECT_EQ(p.global_index, static_cast<int>(i));
    EXPECT_TRUE(std::regex_match(p.uid, uuid)) << p.uid;
    EXPECT_TRUE(std::regex_match(p.container_id, hex64)) << p.container_id;
    EXPECT_EQ(p.ip, "198.18.0." + std::to_string(10 + i));
    EXPECT_EQ(p.netns, "trainsim-0a1b2c3d-" + names[i]);
    EXPECT_LE(p.host_veth.size(), 15u);
    EXPECT_LE(p.peer_veth.size(), 15u);
    ips.insert(p.ip);
    uids.insert(p.uid);
    cids.insert(p.container_id);
  }
  EXPECT_EQ(ips.size(), 7u);
  EXPECT_EQ(uids.size(), 7u);
  EXPECT_EQ(cids.size(), 7u);
  EXPECT_EQ(l.pods[1].role, PodRole::kPs);
  EXPECT_EQ(l.pods[4].index, 2);
  EXPECT_EQ(l.Find("b-ps-0")->job->namespace_name, "other");
  EXPECT_EQ(l.FindByIp("198.18.0.12")->name, "a-worker-0");
  EXPECT_EQ(l.Find("nope"), nullptr);
}

TEST(LayoutTest, ReproducibleAndRunSpecific) {
  Scenario s = TwoJobs();
  Layout a = MakeLayout(s, "0a1b2c3d"), b = MakeLayout(s, "0a1b2c3d"),
         c = MakeLayout(s, "ffffffff");
  EXPECT_EQ(a.pods[3].uid, b.pods[3].uid);
  EXPECT_EQ(a.pods[3].container_id, b.pods[3].container_id);
  EXPECT_NE(a.pods[3].uid, c.pods[3].uid);
  EXPECT_NE(a.pods[3].container_id, c.pods[3].container_id);
}

TEST(LayoutTest, KubeletCgroupPaths) {
  Scenario s = TwoJobs();
  Layout l = MakeLayout(s, "0a1b2c3d");
  const SimPod& p = l.pods[0];
  EXPECT_EQ(PodCgroupPath(p),
            "kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod" +
                UnderscoredUid(p.uid) + ".slice");
  EXPECT_EQ(ContainerCgroupPath(p),
            PodCgroupPath(p) + "/cri-containerd-" + p.container_id + ".scope");
  EXPECT_EQ(UnderscoredUid("a-b-c"), "a_b_c");
}

TEST(LayoutTest, RunIds) {
  EXPECT_TRUE(ValidRunId("0a1b2c3d"));
  EXPECT_FALSE(ValidRunId("0A1B2C3D"));
  EXPECT_FALSE(ValidRunId("0a1b2c3"));
  EXPECT_FALSE(ValidRunId("0a1b2c3d0"));
  EXPECT_FALSE(ValidRunId("../../x1"));
  EXPECT_TRUE(ValidRunId(NewRunId()));
}

}  // namespace
}  // namespace trainsim
