#include "discovery/cgroup_scan_source.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "discovery/pod_json.h"
#include "test_wait.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const fs::path kFixtures =
    fs::path(TRAINSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "hosts";

class CgroupScanFixtureTest : public ::testing::TestWithParam<std::string> {};

// The scan must find exactly the pods of the layout's pods.json (written by
// the same generator as the tree) and every container the API reports.
TEST_P(CgroupScanFixtureTest, FindsThePodsOfThePodList) {
  const fs::path host = kFixtures / GetParam();
  std::ifstream in(host / "pods.json");
  ASSERT_TRUE(in) << host / "pods.json";
  std::stringstream body;
  body << in.rdbuf();
  PodList api_pods;
  ASSERT_TRUE(ParsePodList(body.str(), &api_pods, nullptr).ok());
  ASSERT_FALSE(api_pods.empty());

  HostPaths paths;
  paths.cgroup_root = host / "sys" / "fs" / "cgroup";
  PodTable table;
  CgroupScanSource source({}, paths, table);
  Status st = source.ScanOnce();
  ASSERT_TRUE(st.ok()) << st.message();
  EXPECT_TRUE(source.stats().ready);
  auto scanned = table.Get();

  std::set<std::string> want_uids, got_uids;
  for (const auto& p : api_pods) want_uids.insert(p.uid);
  for (const auto& p : *scanned) got_uids.insert(p.uid);
  EXPECT_EQ(got_uids, want_uids);

  for (const auto& api : api_pods) {
    SCOPED_TRACE(api.namespace_name + "/" + api.name);
    auto it = std::find_if(scanned->begin(), scanned->end(),
                           [&](const PodInfo& p) { return p.uid == api.uid; });
    ASSERT_NE(it, scanned->end());
    // No API: the uid stands in for the name, nothing else is known.
    EXPECT_EQ(it->name, api.uid);
    EXPECT_EQ(it->namespace_name, "");
    EXPECT_TRUE(it->labels.empty());
    EXPECT_EQ(it->role, Role::kUnknown);
    // The pause sandbox is found too, so the scan may hold one more.
    EXPECT_EQ(it->containers.size(), api.containers.size() + 1);
    for (const auto& want : api.containers) {
      auto c = std::find_if(
          it->containers.begin(), it->containers.end(),
          [&](const ContainerInfo& info) { return info.id == want.id; });
      ASSERT_NE(c, it->containers.end()) << want.name << " " << want.id;
      EXPECT_EQ(c->name, want.id.substr(0, 12));
      if (!c->runtime.empty()) {
        EXPECT_EQ(c->runtime, want.runtime);
      }
    }
    for (const auto& c : it->containers) {
      EXPECT_EQ(c.id.size(), 64u) << c.id;  // never a conmon scope or junk
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, CgroupScanFixtureTest,
                         ::testing::Values("v2-systemd", "v2-cgroupfs",
                                           "v1-systemd", "v1-cgroupfs",
                                           "hybrid-systemd"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

class CgroupScanSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "cgscan-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    std::ofstream(root_ / "cgroup.controllers") << "cpu memory io pids\n";
  }
  void TearDown() override { fs::remove_all(root_); }

  void AddPod(const std::string& uid, char id_char) {
    const fs::path pod = root_ / "kubepods" / "burstable" / ("pod" + uid);
    fs::create_directories(pod / std::string(64, id_char));
  }
  std::set<std::string> Uids() const {
    std::set<std::string> out;
    auto pods = table_.Get();  // keeps the list alive through the loop
    for (const auto& p : *pods) out.insert(p.uid);
    return out;
  }

  fs::path root_;
  PodTable table_;
};

TEST_F(CgroupScanSourceTest, FollowsPodsComingAndGoing) {
  const std::string a = "11111111-2222-3333-4444-555555555555";
  const std::string b = "66666666-7777-8888-9999-000000000000";
  AddPod(a, 'a');
  HostPaths paths;
  paths.cgroup_root = root_;
  CgroupScanSource source({.interval = 20ms}, paths, table_);
  ASSERT_TRUE(source.Start().ok());
  EXPECT_EQ(Uids(), std::set<std::string>{a});
  AddPod(b, 'b');
  ASSERT_TRUE(testing::WaitUntil([&] {
    return Uids() == std::set<std::string>{a, b};
  }));
  fs::remove_all(root_ / "kubepods" / "burstable" / ("pod" + a));
  ASSERT_TRUE(
      testing::WaitUntil([&] { return Uids() == std::set<std::string>{b}; }));
  auto pods = table_.Get();
  ASSERT_EQ(pods->front().containers.size(), 1u);
  EXPECT_EQ(pods->front().containers[0].name, std::string(12, 'b'));
  EXPECT_EQ(source.stats().errors_total, 0u);
  const auto t0 = std::chrono::steady_clock::now();
  source.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}

TEST_F(CgroupScanSourceTest, VanishedRootCountsErrorsAndKeepsPods) {
  const std::string a = "11111111-2222-3333-4444-555555555555";
  AddPod(a, 'a');
  HostPaths paths;
  paths.cgroup_root = root_;
  CgroupScanSource source({.interval = 20ms}, paths, table_);
  ASSERT_TRUE(source.Start().ok());
  fs::remove_all(root_);
  ASSERT_TRUE(
      testing::WaitUntil([&] { return source.stats().errors_total >= 2; }));
  EXPECT_EQ(Uids(), std::set<std::string>{a});
  fs::create_directories(root_);  // for TearDown symmetry
}

TEST(CgroupScanSourceStartTest, MissingRootIsAnError) {
  HostPaths paths;
  paths.cgroup_root = "/nonexistent/cgroup/root";
  PodTable table;
  CgroupScanSource source({}, paths, table);
  Status st = source.Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("/nonexistent/cgroup/root"), std::string::npos);
}

}  // namespace
}  // namespace trainscope
