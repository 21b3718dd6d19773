#include "kube/pod_cgroups.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "fixture_hosts.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
using testing::FixtureCgroupRoot;
using testing::FixtureLayouts;
using testing::LoadExpected;
using testing::TempDir;

const std::string kUid = "5d327134-2adb-42df-1641-afa0559997d7";
const std::string kUidUnderscored = "5d327134_2adb_42df_1641_afa0559997d7";
const std::string kId =
    "b1f1dcd0d96b464919637b2d77929132fcfc650560f4e70c14ebc9359f30ba77";

struct UidCase {
  std::string name;
  std::optional<std::string> want;
};

TEST(PodUidFromDirName, Table) {
  const std::string u = kUidUnderscored;
  const std::vector<UidCase> cases = {
      {"kubepods-burstable-pod" + u + ".slice", kUid},
      {"kubepods-besteffort-pod" + u + ".slice", kUid},
      {"kubepods-pod" + u + ".slice", kUid},                    // Guaranteed
      {"kubelet-kubepods-burstable-pod" + u + ".slice", kUid},  // custom root
      {"pod" + kUid, kUid},                                     // cgroupfs
      {"pod6d1d3d0f3e2a4b5c8d9e0f1a2b3c4d5e",  // static pod: 32-hex hash
       "6d1d3d0f3e2a4b5c8d9e0f1a2b3c4d5e"},
      {"kubepods-burstable-pod" + kUid + ".slice", std::nullopt},  // dashes
      {"pod" + u, std::nullopt},  // underscores in a cgroupfs name
      {"kubepods-guaranteed-pod" + u + ".slice", std::nullopt},
      {"system-pod" + u + ".slice", std::nullopt},
      {"kubepods-burstable-pod" + u, std::nullopt},  // no .slice
      {"kubepods-burstable-pod" + u + ".scope", std::nullopt},
      {"xkubepods-pod" + u + ".slice", std::nullopt},
      {"pod5D327134-2ADB-42DF-1641-AFA0559997D7", std::nullopt},
      {"pod5d327134-2adb", std::nullopt},
      {"pod", std::nullopt},
      {"kubepods.slice", std::nullopt},
      {"kubepods-burstable.slice", std::nullopt},
      {"kubepods-burstable-pod.slice", std::nullopt},
      {"", std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(PodUidFromDirName(c.name), c.want) << c.name;
  }
}

struct ContainerCase {
  std::string name;
  bool container;
  std::string runtime;
};

TEST(ContainerFromDirName, Table) {
  const std::vector<ContainerCase> cases = {
      {"cri-containerd-" + kId + ".scope", true, "containerd"},
      {"crio-" + kId + ".scope", true, "cri-o"},
      {"crio-" + kId, true, "cri-o"},  // CRI-O with the cgroupfs driver
      {"docker-" + kId + ".scope", true, "docker"},
      {kId, true, ""},  // cgroupfs driver, containerd or docker
      {"crio-conmon-" + kId + ".scope", false, ""},
      {"crio-conmon-" + kId, false, ""},
      {kId + ".scope", false, ""},
      {"cri-containerd-" + kId.substr(1) + ".scope", false, ""},
      {"docker-" + kId + "0.scope", false, ""},
      {"cri-containerd-B1F1DCD0D96B464919637B2D77929132FCFC650560F4E70C14EBC935"
       "9F30BA77.scope",
       false, ""},
      {"containerd-" + kId + ".scope", false, ""},
      {"init.scope", false, ""},
      {"system.slice", false, ""},
      {"", false, ""},
  };
  for (const auto& c : cases) {
    const auto got = ContainerFromDirName(c.name);
    ASSERT_EQ(got.has_value(), c.container) << c.name;
    if (!got) continue;
    EXPECT_EQ(got->id, kId) << c.name;
    EXPECT_EQ(got->runtime, c.runtime) << c.name;
  }
}

std::set<std::string> Keys(const CgroupHierarchies& h) {
  std::set<std::string> out;
  for (const auto& [name, path] : h.v1) out.insert(name);
  return out;
}

TEST(DetectHierarchies, PureV2) {
  for (const std::string layout : {"v2-systemd", "v2-cgroupfs"}) {
    const auto root = FixtureCgroupRoot(layout);
    const auto h = DetectHierarchies(root);
    ASSERT_TRUE(h.unified.has_value()) << layout;
    EXPECT_EQ(*h.unified, root) << layout;
    EXPECT_TRUE(h.v1.empty()) << layout;
    EXPECT_TRUE(h.unified_controllers.contains("memory")) << layout;
    EXPECT_TRUE(h.unified_controllers.contains("io")) << layout;
  }
}

TEST(DetectHierarchies, CoMountedV1WithSymlinks) {
  const auto root = FixtureCgroupRoot("v1-systemd");
  const auto h = DetectHierarchies(root);
  EXPECT_FALSE(h.unified.has_value());
  EXPECT_EQ(Keys(h), (std::set<std::string>{"blkio", "cpu", "cpuacct", "memory",
                                            "pids", "systemd"}));
  EXPECT_EQ(h.v1.at("cpu"), root / "cpu,cpuacct");
  EXPECT_EQ(h.v1.at("cpuacct"), root / "cpu,cpuacct");
  EXPECT_EQ(h.v1.at("memory"), root / "memory");
}

TEST(DetectHierarchies, SeparateV1) {
  const auto root = FixtureCgroupRoot("v1-cgroupfs");
  const auto h = DetectHierarchies(root);
  EXPECT_FALSE(h.unified.has_value());
  EXPECT_EQ(h.v1.at("cpu"), root / "cpu");
  EXPECT_EQ(h.v1.at("cpuacct"), root / "cpuacct");
  EXPECT_EQ(h.v1.at("blkio"), root / "blkio");
}

TEST(DetectHierarchies, Hybrid) {
  const auto root = FixtureCgroupRoot("hybrid-systemd");
  const auto h = DetectHierarchies(root);
  ASSERT_TRUE(h.unified.has_value());
  EXPECT_EQ(*h.unified, root / "unified");
  EXPECT_EQ(Keys(h), (std::set<std::string>{"blkio", "cpu", "cpuacct", "memory",
                                            "pids", "systemd"}));
  // Every controller is bound to v1: the unified tree offers none.
  EXPECT_TRUE(h.unified_controllers.empty());
}

TEST(DetectHierarchies, MissingOrEmptyRoot) {
  TempDir tmp;
  auto h = DetectHierarchies(tmp.path());
  EXPECT_FALSE(h.unified);
  EXPECT_TRUE(h.v1.empty());
  h = DetectHierarchies(tmp.path() / "does-not-exist");
  EXPECT_FALSE(h.unified);
  EXPECT_TRUE(h.v1.empty());
}

TEST(DetectHierarchies, IgnoresUnknownDirectoriesWithoutCgroupProcs) {
  TempDir tmp;
  tmp.Touch("memory/cgroup.procs", "1\n");
  tmp.Touch("lost+found/x");
  tmp.Touch("net_cls,net_prio/tasks");
  tmp.Touch("rdma-ish/cgroup.procs", "1\n");  // mounted, odd name: taken
  const auto h = DetectHierarchies(tmp.path());
  EXPECT_EQ(Keys(h), (std::set<std::string>{"memory", "net_cls", "net_prio",
                                            "rdma-ish"}));
}

class ScanLayout : public ::testing::TestWithParam<std::string> {};

TEST_P(ScanLayout, FindsExactlyThePodsAndLeavesOfTheTree) {
  const std::string layout = GetParam();
  const auto expected = LoadExpected(layout);
  const auto pods =
      ScanPodCgroups(DetectHierarchies(FixtureCgroupRoot(layout)));
  ASSERT_EQ(pods.size(), expected.at("pods").size());
  for (const auto& want : expected.at("pods")) {
    const auto uid = want.at("uid").get<std::string>();
    const auto it = std::find_if(pods.begin(), pods.end(),
                                 [&](const auto& p) { return p.uid == uid; });
    ASSERT_NE(it, pods.end()) << uid;
    EXPECT_EQ(it->qos, want.at("qos").get<std::string>()) << uid;
    EXPECT_EQ(it->relative_path, want.at("cgroup_path").get<std::string>());
    std::set<std::pair<std::string, std::string>> got_leaves, want_leaves;
    for (const auto& c : it->containers) {
      got_leaves.emplace(c.id, c.relative_path);
    }
    for (const auto& c : want.at("containers")) {
      want_leaves.emplace(c.at("id").get<std::string>(),
                          c.at("cgroup_path").get<std::string>());
    }
    EXPECT_EQ(got_leaves, want_leaves) << layout << " " << uid;
  }
}

TEST_P(ScanLayout, EveryHierarchySeesTheSamePods) {
  const auto h = DetectHierarchies(FixtureCgroupRoot(GetParam()));
  const auto merged = ScanPodCgroups(h);
  std::vector<fs::path> roots;
  if (h.unified) roots.push_back(*h.unified);
  for (const auto& [name, path] : h.v1) roots.push_back(path);
  for (const auto& root : roots) {
    const auto pods = ScanPodCgroups(root);
    ASSERT_EQ(pods.size(), merged.size()) << root;
    for (size_t i = 0; i < pods.size(); ++i) {
      EXPECT_EQ(pods[i].uid, merged[i].uid) << root;
      EXPECT_EQ(pods[i].containers.size(), merged[i].containers.size());
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ScanLayout,
                         ::testing::ValuesIn(FixtureLayouts()),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

TEST(ScanPodCgroups, RuntimeOfLeaves) {
  const auto pods =
      ScanPodCgroups(DetectHierarchies(FixtureCgroupRoot("v1-systemd")));
  ASSERT_FALSE(pods.empty());
  for (const auto& pod : pods) {
    ASSERT_FALSE(pod.containers.empty());
    for (const auto& c : pod.containers) EXPECT_EQ(c.runtime, "cri-o");
  }
}

TEST(ScanPodCgroups, CustomKubeletRootsByPathTail) {
  TempDir tmp;
  const std::string other_uid = "0d3f1c2a-9b8e-4c7d-a6f5-e4d3c2b1a098";
  const std::string other_id(64, 'e');
  // systemd driver below --cgroup-root=/kubelet.slice.
  tmp.Touch(
      "kubelet.slice/kubelet-kubepods.slice/"
      "kubelet-kubepods-burstable.slice/kubelet-kubepods-burstable-pod" +
      kUidUnderscored + ".slice/cri-containerd-" + kId + ".scope/cgroup.procs");
  // cgroupfs driver inside a kind node container.
  tmp.Touch("docker/" + std::string(64, 'a') +
            "/kubelet/kubepods/besteffort/pod" + other_uid + "/" + other_id +
            "/cgroup.procs");
  // Lookalikes outside kubelet's trees.
  tmp.Touch("system.slice/pod" + kUid + "/x");
  tmp.Touch("user.slice/kubepods/guaranteed/pod" + kUid + "/x");

  const auto pods = ScanPodCgroups(tmp.path());
  ASSERT_EQ(pods.size(), 2u);
  const auto& a = pods[0].uid == other_uid ? pods[0] : pods[1];
  const auto& b = pods[0].uid == other_uid ? pods[1] : pods[0];
  EXPECT_EQ(a.uid, other_uid);
  EXPECT_EQ(a.qos, "besteffort");
  ASSERT_EQ(a.containers.size(), 1u);
  EXPECT_EQ(a.containers[0].id, other_id);
  EXPECT_EQ(a.containers[0].relative_path,
            "docker/" + std::string(64, 'a') +
                "/kubelet/kubepods/besteffort/pod" + other_uid + "/" +
                other_id);
  EXPECT_EQ(b.uid, kUid);
  EXPECT_EQ(b.qos, "burstable");
  ASSERT_EQ(b.containers.size(), 1u);
  EXPECT_EQ(b.containers[0].runtime, "containerd");
}

TEST(ScanPodCgroups, DepthIsBounded) {
  TempDir tmp;
  std::string deep;
  for (int i = 0; i < 12; ++i) deep += "level" + std::to_string(i) + "/";
  tmp.Touch(deep + "kubepods/pod" + kUid + "/" + kId + "/cgroup.procs");
  tmp.Touch("kubepods/burstable/pod" + kUid + "/junk/cgroup.procs");
  const auto pods = ScanPodCgroups(tmp.path());
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].relative_path, "kubepods/burstable/pod" + kUid);
  EXPECT_TRUE(pods[0].containers.empty());
}

TEST(ScanPodCgroups, MissingHierarchyIsEmpty) {
  EXPECT_TRUE(ScanPodCgroups(fs::path("/nonexistent/trainscope")).empty());
  EXPECT_TRUE(ScanPodCgroups(CgroupHierarchies{}).empty());
}

}  // namespace
}  // namespace trainscope
