#include "bpf_common/cgroup2.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "flows/pcap_capture.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;

class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("flows-unit-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter_++));
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  const fs::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  fs::path path_;
};

TEST(CgroupLevel, CountsComponents) {
  const std::pair<const char*, uint32_t> cases[] = {
      {"kubepods.slice/kubepods-podx.slice", 2},
      {"kubepods.slice/kubepods-burstable.slice/kubepods-burstable-podx.slice",
       3},
      {"kubepods/besteffort/podx", 3},
      {"custom/root/kubepods/podx", 4},
      {"", 0}};
  for (const auto& [path, level] : cases) {
    EXPECT_EQ(CgroupLevel(path), level) << path;
  }
}

TEST(ScanPodCgroupIds, GuaranteedAndBurstablePodsAtTheirOwnDepth) {
  TempDir root;
  const std::string guaranteed =
      "kubepods.slice/kubepods-pod11111111_2222_3333_4444_555555555555.slice";
  const std::string burstable =
      "kubepods.slice/kubepods-burstable.slice/"
      "kubepods-burstable-podaaaaaaaa_bbbb_cccc_dddd_eeeeeeeeeeee.slice";
  fs::create_directories(root.path() / guaranteed);
  fs::create_directories(root.path() / burstable / "cri-containerd-x.scope");
  auto ids = ScanPodCgroupIds(root.path());
  ASSERT_EQ(ids.size(), 2u);
  struct stat g {
  }, b{};
  ASSERT_EQ(::stat((root.path() / guaranteed).c_str(), &g), 0);
  ASSERT_EQ(::stat((root.path() / burstable).c_str(), &b), 0);
  EXPECT_EQ(ids.at(g.st_ino).uid, "11111111-2222-3333-4444-555555555555");
  EXPECT_EQ(ids.at(g.st_ino).level, 2u);
  EXPECT_EQ(ids.at(b.st_ino).uid, "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee");
  EXPECT_EQ(ids.at(b.st_ino).level, 3u);
}

TEST(LocateCgroup2, RejectsDirectoriesThatAreNotCgroup2) {
  TempDir dir;
  Cgroup2Target target;
  Status s = LocateCgroup2(dir.path(), "", &target);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("no cgroup v2 hierarchy"), std::string::npos)
      << s.message();
  s = LocateCgroup2("/sys/fs/cgroup", dir.path(), &target);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("--cgroup2-path"), std::string::npos);
}

TEST(LocateCgroup2, FindsTheHostHierarchy) {
  Cgroup2Target target;
  Status s = LocateCgroup2("/sys/fs/cgroup", "", &target);
  if (!s.ok()) GTEST_SKIP() << "no cgroup v2 on this host: " << s.message();
  EXPECT_TRUE(target.root == "/sys/fs/cgroup" ||
              target.root == "/sys/fs/cgroup/unified")
      << target.root;
  EXPECT_EQ(target.attach.string().rfind(target.root.string(), 0), 0u);
}

// --cgroup2-path below the mount (one node's slice of a simulated
// cluster): the BPF ancestor levels still count from the mount.
TEST(LocateCgroup2, SubtreeOverrideKnowsItsDepthBelowTheMount) {
  Cgroup2Target host;
  if (!LocateCgroup2("/sys/fs/cgroup", "", &host).ok())
    GTEST_SKIP() << "no cgroup v2 on this host";
  fs::path child;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(host.root, ec))
    if (e.is_directory()) {
      child = e.path();
      break;
    }
  if (child.empty()) GTEST_SKIP() << "no child cgroup under " << host.root;
  Cgroup2Target target;
  ASSERT_TRUE(LocateCgroup2("/sys/fs/cgroup", child, &target).ok());
  EXPECT_EQ(target.root, child);
  EXPECT_EQ(target.root_level, 1u);
  ASSERT_TRUE(
      LocateCgroup2("/sys/fs/cgroup", child.string() + "/", &target).ok());
  EXPECT_EQ(target.root_level, 1u);
  ASSERT_TRUE(LocateCgroup2("/sys/fs/cgroup", host.root, &target).ok());
  EXPECT_EQ(target.root_level, 0u);
}

TEST(PhysicalInterfaces, OnlyThoseWithADevice) {
  TempDir sys;
  fs::create_directories(sys.path() / "class/net/eth0/device");
  fs::create_directories(sys.path() / "class/net/ens5/device");
  fs::create_directories(sys.path() / "class/net/lo");
  fs::create_directories(sys.path() / "class/net/veth1234");
  EXPECT_EQ(PhysicalInterfaces(sys.path()),
            (std::vector<std::string>{"ens5", "eth0"}));
  EXPECT_TRUE(PhysicalInterfaces(sys.path() / "missing").empty());
}

}  // namespace
}  // namespace trainscope
