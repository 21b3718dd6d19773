// The collector reuses its last walk of the hierarchies between cycles; these
// tests change the tree under one collector and check that what a fresh
// collector would report is what this one reports.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "cgroup/cgroup_collector.h"
#include "fixture_hosts.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
using testing::FixtureCgroupRoot;
using testing::LoadExpected;
using testing::LoadPods;
using testing::TempDir;

class RescanTest : public ::testing::Test {
 protected:
  RescanTest()
      : root_(tmp_.path() / "cgroup"),
        collector_([this] {
          fs::copy(
              FixtureCgroupRoot("v2-systemd"), root_,
              fs::copy_options::recursive | fs::copy_options::copy_symlinks);
          HostPaths host;
          host.cgroup_root = root_;
          return host;
        }()),
        pods_(LoadPods("v2-systemd")),
        expected_(LoadExpected("v2-systemd")) {}

  Snapshot Collect(const PodList& pods) {
    return CollectWith(collector_, pods);
  }
  // What a collector with no past would report now.
  Snapshot CollectFresh(const PodList& pods) {
    HostPaths host;
    host.cgroup_root = root_;
    CgroupCollector fresh(host);
    return CollectWith(fresh, pods);
  }
  Snapshot CollectWith(CgroupCollector& collector, const PodList& pods) {
    HostPaths host;
    host.cgroup_root = root_;
    Snapshot snap;
    const CollectContext ctx{host, std::make_shared<const PodList>(pods)};
    EXPECT_TRUE(collector.Collect(ctx, snap).ok());
    return snap;
  }

  fs::path PodDir(size_t i) const {
    return root_ /
           expected_.at("pods").at(i).at("cgroup_path").get<std::string>();
  }
  fs::path ContainerDir(size_t pod, size_t container) const {
    return root_ / expected_.at("pods")
                       .at(pod)
                       .at("containers")
                       .at(container)
                       .at("cgroup_path")
                       .get<std::string>();
  }

  TempDir tmp_;
  fs::path root_;
  CgroupCollector collector_;
  PodList pods_;
  nlohmann::json expected_;
};

TEST_F(RescanTest, PodWhoseCgroupAppearsLaterIsFoundOnTheNextCycle) {
  const fs::path aside = tmp_.path() / "aside";
  fs::rename(PodDir(1), aside);
  EXPECT_EQ(Collect(pods_).pod_samples.count(pods_[1].uid), 0u);
  fs::rename(aside, PodDir(1));
  const Snapshot snap = Collect(pods_);
  ASSERT_EQ(snap.pod_samples.count(pods_[1].uid), 1u);
  EXPECT_TRUE(snap.pod_samples.at(pods_[1].uid).cgroup.cpu.usage_seconds);
}

TEST_F(RescanTest, RemovedPodIsLeftOutAtOnce) {
  ASSERT_EQ(Collect(pods_).pod_samples.count(pods_[0].uid), 1u);
  fs::remove_all(PodDir(0));
  const Snapshot snap = Collect(pods_);
  EXPECT_EQ(snap.pod_samples.count(pods_[0].uid), 0u);
  EXPECT_EQ(snap.pod_samples.size(), pods_.size() - 1);
}

// A restarted container: new runtime id, the old leaf removed. With ids from
// the pod list the new one is found in the same cycle; without them (cgroup
// discovery), one cycle later.
TEST_F(RescanTest, RestartedContainerIsFollowed) {
  const fs::path old_dir = ContainerDir(0, 0);
  const std::string old_id = pods_[0].containers[0].id;
  std::string new_id = old_id;
  new_id[0] = new_id[0] == 'a' ? 'b' : 'a';
  std::string leaf = old_dir.filename().string();
  leaf.replace(leaf.find(old_id), old_id.size(), new_id);

  // The runtime removes the old leaf and creates a new one (the kernel never
  // renames a cgroup; a directory kept open would follow a rename).
  const auto recreate = [](const fs::path& from, const fs::path& to) {
    fs::copy(from, to, fs::copy_options::recursive);
    fs::remove_all(from);
  };
  ASSERT_EQ(Collect(pods_).pod_samples.at(pods_[0].uid).containers.size(),
            pods_[0].containers.size());
  recreate(old_dir, old_dir.parent_path() / leaf);

  PodList with_ids = pods_;
  with_ids[0].containers[0].id = new_id;
  const Snapshot after = Collect(with_ids);
  const PodSample& restarted = after.pod_samples.at(pods_[0].uid);
  ASSERT_EQ(restarted.containers.size(), pods_[0].containers.size());
  EXPECT_EQ(restarted.containers[0].id, new_id);
  EXPECT_TRUE(restarted.containers[0].cgroup.cpu.usage_seconds);

  PodList without_ids = pods_;
  for (auto& pod : without_ids) pod.containers.clear();
  recreate(old_dir.parent_path() / leaf, old_dir);  // back to the old id
  auto ids = [](const PodSample& pod) {
    std::set<std::string> out;
    for (const auto& c : pod.containers) out.insert(c.id);
    return out;
  };
  const auto gone = Collect(without_ids).pod_samples.at(pods_[0].uid);
  EXPECT_FALSE(ids(gone).contains(new_id));
  EXPECT_FALSE(ids(gone).contains(old_id));
  const auto found = Collect(without_ids).pod_samples.at(pods_[0].uid);
  EXPECT_TRUE(ids(found).contains(old_id));
  EXPECT_EQ(ids(found),
            ids(CollectFresh(without_ids).pod_samples.at(pods_[0].uid)));
}

// Limits change only when a pod is resized: they are read on the pod's
// first cycle and every 12th after (a minute at the default interval).
TEST_F(RescanTest, AResizedLimitIsReadWithinTwelveCycles) {
  const fs::path max = PodDir(0) / "memory.max";
  ASSERT_TRUE(fs::exists(max));
  const auto limit = [&] {
    return Collect(pods_)
        .pod_samples.at(pods_[0].uid)
        .cgroup.memory.limit_bytes;
  };
  const auto before = limit();
  ASSERT_NE(before, std::optional<uint64_t>(123456789));
  {
    std::ofstream resized(max);  // in place, as the kernel's file changes
    resized << "123456789\n";
  }
  for (int cycle = 2; cycle <= 12; ++cycle) {
    EXPECT_EQ(limit(), before) << "cycle " << cycle;
  }
  EXPECT_EQ(limit(), std::optional<uint64_t>(123456789));
}

}  // namespace
}  // namespace trainscope
