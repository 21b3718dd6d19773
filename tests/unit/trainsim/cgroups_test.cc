#include "cgroups.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace trainsim {
namespace {

// A pure v2 host is told by the root's cgroup.controllers: one hierarchy
// with the controllers it lists.
TEST(CgroupsTest, DetectsPureV2) {
  const std::string root = ::testing::TempDir() + "/trainsim-v2root";
  std::filesystem::create_directories(root);
  std::ofstream(root + "/cgroup.controllers") << "cpuset cpu io memory pids\n";
  auto hs = DetectHierarchies(root);
  ASSERT_EQ(hs.size(), 1u);
  EXPECT_TRUE(hs[0].v2);
  EXPECT_EQ(hs[0].root, root);
  EXPECT_EQ(hs[0].controllers,
            (std::set<std::string>{"cpuset", "cpu", "io", "memory", "pids"}));
  std::filesystem::remove_all(root);
}

// Not v2 and nothing mounted below the root: no hierarchy, and Cgroups
// refuses to work without one.
TEST(CgroupsTest, NoHierarchy) {
  const std::string root = ::testing::TempDir() + "/trainsim-empty-root";
  std::filesystem::create_directories(root);
  EXPECT_TRUE(DetectHierarchies(root).empty());
  EXPECT_THROW(Cgroups({}), std::runtime_error);
  std::filesystem::remove_all(root);
}

TEST(CgroupsTest, BlockDeviceOfNonDisk) {
  EXPECT_EQ(BlockDeviceOf("/proc"), "");
  EXPECT_EQ(BlockDeviceOf("/nonexistent/path"), "");
}

}  // namespace
}  // namespace trainsim
