#include "cgroup/cgroup_collector.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "fixture_hosts.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::FixtureCgroupRoot;
using testing::FixtureLayouts;
using testing::LoadExpected;
using testing::LoadPods;
using testing::TempDir;

struct RunResult {
  CollectStatus status = CollectStatus::Ok();
  Snapshot snapshot;
};

RunResult RunCollector(const fs::path& cgroup_root, PodList pods) {
  HostPaths host;
  host.cgroup_root = cgroup_root;
  CgroupCollector collector(host);
  const CollectContext ctx{host,
                           std::make_shared<const PodList>(std::move(pods))};
  RunResult r;
  r.status = collector.Collect(ctx, r.snapshot);
  return r;
}

template <typename T>
void ExpectValue(const std::optional<T>& got, const json& want,
                 const std::string& what) {
  if (want.is_null()) {
    EXPECT_FALSE(got.has_value()) << what << " should be empty";
    return;
  }
  ASSERT_TRUE(got.has_value()) << what << " is empty";
  if constexpr (std::is_floating_point_v<T>) {
    EXPECT_NEAR(*got, want.get<double>(), 1e-9 * std::max(1.0, *got)) << what;
  } else {
    EXPECT_EQ(*got, want.get<T>()) << what;
  }
}

void ExpectSample(const CgroupSample& s, const json& w,
                  const std::string& where) {
  ExpectValue(s.cpu.usage_seconds, w["cpu_usage_seconds"],
              where + " cpu usage");
  ExpectValue(s.cpu.periods, w["cpu_periods"], where + " periods");
  ExpectValue(s.cpu.throttled_periods, w["cpu_throttled_periods"],
              where + " throttled periods");
  ExpectValue(s.cpu.throttled_seconds, w["cpu_throttled_seconds"],
              where + " throttled seconds");
  ExpectValue(s.cpu.limit_cores, w["cpu_limit_cores"], where + " cpu limit");
  ExpectValue(s.memory.usage_bytes, w["memory_usage_bytes"], where + " usage");
  ExpectValue(s.memory.working_set_bytes, w["memory_working_set_bytes"],
              where + " working set");
  ExpectValue(s.memory.rss_bytes, w["memory_rss_bytes"], where + " rss");
  ExpectValue(s.memory.limit_bytes, w["memory_limit_bytes"],
              where + " memory limit");
  ExpectValue(s.memory.oom_events, w["memory_oom_events"], where + " oom");
  ExpectValue(s.io.read_bytes, w["io_read_bytes"], where + " io read");
  ExpectValue(s.io.write_bytes, w["io_write_bytes"], where + " io write");
  const std::pair<const PressureSample*, std::string> psi[] = {
      {&s.cpu_pressure, "cpu"},
      {&s.memory_pressure, "memory"},
      {&s.io_pressure, "io"}};
  for (const auto& [p, res] : psi) {
    ExpectValue(p->some_seconds, w[res + "_pressure_some_seconds"],
                where + " " + res + " psi some");
    ExpectValue(p->full_seconds, w[res + "_pressure_full_seconds"],
                where + " " + res + " psi full");
  }
}

class CollectLayout : public ::testing::TestWithParam<std::string> {};

TEST_P(CollectLayout, ReportsEveryValueOfEveryPodAndContainer) {
  const std::string layout = GetParam();
  const auto expected = LoadExpected(layout);
  const auto r = RunCollector(FixtureCgroupRoot(layout), LoadPods(layout));
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  ASSERT_EQ(r.snapshot.pod_samples.size(), expected.at("pods").size());

  for (const auto& want : expected.at("pods")) {
    const auto uid = want.at("uid").get<std::string>();
    const std::string where = layout + " " + want.at("name").get<std::string>();
    const auto it = r.snapshot.pod_samples.find(uid);
    ASSERT_NE(it, r.snapshot.pod_samples.end()) << where;
    const PodSample& pod = it->second;
    EXPECT_EQ(pod.uid, uid);
    EXPECT_EQ(pod.cgroup_path, want.at("cgroup_path").get<std::string>());
    EXPECT_EQ(pod.pids, want.at("pids").get<std::vector<int>>()) << where;
    ExpectSample(pod.cgroup, want.at("sample"), where);

    // The pause sandbox (no name in the spec) is not a reported container.
    std::vector<json> named;
    for (const auto& c : want.at("containers")) {
      if (!c.at("name").is_null()) named.push_back(c);
    }
    ASSERT_EQ(pod.containers.size(), named.size()) << where;
    for (size_t i = 0; i < named.size(); ++i) {
      const auto& got = pod.containers[i];
      const auto& w = named[i];
      const std::string cwhere = where + "/" + w.at("name").get<std::string>();
      EXPECT_EQ(got.name, w.at("name").get<std::string>()) << cwhere;
      EXPECT_EQ(got.id, w.at("id").get<std::string>()) << cwhere;
      EXPECT_EQ(got.cgroup_path, w.at("cgroup_path").get<std::string>());
      ExpectSample(got.cgroup, w.at("sample"), cwhere);
    }
  }
}

TEST_P(CollectLayout, CgroupDiscoveryModeReportsEveryLeafByShortId) {
  const std::string layout = GetParam();
  const auto expected = LoadExpected(layout);
  PodList pods = LoadPods(layout);
  for (auto& pod : pods) pod.containers.clear();
  const auto r = RunCollector(FixtureCgroupRoot(layout), pods);
  ASSERT_TRUE(r.status.ok()) << r.status.message();
  for (const auto& want : expected.at("pods")) {
    const auto& pod = r.snapshot.pod_samples.at(want.at("uid"));
    std::set<std::string> got_names, want_names;
    for (const auto& c : pod.containers) got_names.insert(c.name);
    for (const auto& c : want.at("containers")) {
      want_names.insert(c.at("id").get<std::string>().substr(0, 12));
    }
    EXPECT_EQ(got_names, want_names);
    const auto want_pids = want.at("pids").get<std::vector<int>>();
    EXPECT_EQ(std::set<int>(pod.pids.begin(), pod.pids.end()),
              std::set<int>(want_pids.begin(), want_pids.end()));
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CollectLayout,
                         ::testing::ValuesIn(FixtureLayouts()),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

// Hand-checked values (README tables), independent of expected.json.
TEST(CgroupCollector, HybridReadsEachValueWhereItIs) {
  auto pods = LoadPods("hybrid-systemd");
  const auto r = RunCollector(FixtureCgroupRoot("hybrid-systemd"), pods);
  ASSERT_TRUE(r.status.ok());
  const auto& worker = r.snapshot.pod_samples.at(pods[1].uid);  // ctr-worker-0
  ASSERT_EQ(pods[1].name, "ctr-worker-0");
  const auto& tf = worker.containers.at(0).cgroup;
  // v2 usage_usec 421001386, not v1 cpuacct.usage 421001386456 ns.
  EXPECT_DOUBLE_EQ(*tf.cpu.usage_seconds, 421.001386);
  // Throttling and limits only exist in v1 here.
  EXPECT_EQ(*tf.cpu.periods, 42107u);
  EXPECT_DOUBLE_EQ(*tf.cpu.limit_cores, 0.5);
  EXPECT_EQ(*tf.memory.limit_bytes, 1073741824u);
  EXPECT_EQ(*tf.memory.oom_events, 2u);
  EXPECT_EQ(*tf.io.read_bytes, 172441600u);
  // PSI only exists in v2.
  EXPECT_DOUBLE_EQ(*tf.cpu_pressure.some_seconds, 0.421001);
  EXPECT_EQ(worker.pids, (std::vector<int>{5003, 5004}));
}

TEST(CgroupCollector, V1UsesHierarchicalMemoryAndCgroupfsQuirks) {
  auto pods = LoadPods("v1-cgroupfs");
  const auto r = RunCollector(FixtureCgroupRoot("v1-cgroupfs"), pods);
  ASSERT_TRUE(r.status.ok());
  ASSERT_EQ(pods[0].name, "bert-ps-0");
  const auto& ps = r.snapshot.pod_samples.at(pods[0].uid);
  EXPECT_EQ(*ps.cgroup.memory.working_set_bytes, 307257344u);
  EXPECT_EQ(*ps.cgroup.memory.rss_bytes, 168214528u);  // total_rss, not rss
  EXPECT_DOUBLE_EQ(*ps.cgroup.cpu.limit_cores, 3.0);   // 150000 / 50000
  EXPECT_FALSE(ps.cgroup.memory.oom_events);  // kernel without oom_kill
  EXPECT_FALSE(ps.cgroup.cpu_pressure.some_seconds);
  // Container leaf without the _recursive blkio file: the plain one.
  EXPECT_EQ(*ps.containers.at(0).cgroup.io.read_bytes, 127385600u);
}

TEST(CgroupCollector, PodsWithoutCgroupsAreLeftOut) {
  PodList pods = LoadPods("v2-systemd");
  PodInfo ghost;
  ghost.uid = "00000000-0000-0000-0000-000000000000";
  ghost.name = "ghost";
  pods.push_back(ghost);
  const auto r = RunCollector(FixtureCgroupRoot("v2-systemd"), pods);
  ASSERT_TRUE(r.status.ok());
  EXPECT_EQ(r.snapshot.pod_samples.size(), pods.size() - 1);
  EXPECT_EQ(r.snapshot.pod_samples.count(ghost.uid), 0u);
}

TEST(CgroupCollector, NoPodsIsOk) {
  const auto r = RunCollector(FixtureCgroupRoot("v2-cgroupfs"), {});
  EXPECT_TRUE(r.status.ok());
  EXPECT_TRUE(r.snapshot.pod_samples.empty());

  HostPaths host;
  host.cgroup_root = FixtureCgroupRoot("v2-cgroupfs");
  CgroupCollector collector(host);
  Snapshot snap;
  EXPECT_TRUE(collector.Collect(CollectContext{host, nullptr}, snap).ok());
  EXPECT_EQ(collector.name(), "cgroup");
}

TEST(CgroupCollector, MissingRootIsAnErrorNamingThePath) {
  const fs::path root = "/nonexistent/trainscope/cgroup";
  RunResult r;
  EXPECT_NO_THROW(r = RunCollector(root, LoadPods("v2-systemd")));
  EXPECT_EQ(r.status.code(), Status::Code::kError);
  EXPECT_NE(r.status.message().find(root.string()), std::string::npos)
      << r.status.message();
  EXPECT_TRUE(r.snapshot.pod_samples.empty());
}

TEST(CgroupCollector, RootWithoutHierarchiesIsAnError) {
  TempDir tmp;
  const auto r = RunCollector(tmp.path(), LoadPods("v2-systemd"));
  EXPECT_EQ(r.status.code(), Status::Code::kError);
  EXPECT_NE(r.status.message().find("no cgroup hierarchy"), std::string::npos);

  // A regular file where the root should be.
  const auto file = fs::path(TRAINSCOPE_SOURCE_DIR) / "CMakeLists.txt";
  EXPECT_EQ(RunCollector(file, {}).status.code(), Status::Code::kError);
}

TEST(CgroupCollector, UnreadableFilesLeaveValuesEmpty) {
  // A copy of a layout where some files are replaced by directories (which
  // cannot be read as files even by root) and others hold garbage.
  TempDir tmp;
  const fs::path root = tmp.path() / "cgroup";
  fs::copy(FixtureCgroupRoot("v2-systemd"), root,
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  const PodList pods = LoadPods("v2-systemd");
  const json expected = LoadExpected("v2-systemd");
  const auto pod_dir =
      root / expected.at("pods").at(0).at("cgroup_path").get<std::string>();
  fs::remove(pod_dir / "memory.current");
  fs::create_directory(pod_dir / "memory.current");
  std::ofstream(pod_dir / "cpu.stat") << "usage_usec lots\n";
  fs::remove(pod_dir / "io.stat");

  const auto r = RunCollector(root, pods);
  ASSERT_TRUE(r.status.ok());
  const auto& s = r.snapshot.pod_samples.at(pods[0].uid).cgroup;
  EXPECT_FALSE(s.memory.usage_bytes);
  EXPECT_FALSE(s.memory.working_set_bytes);
  EXPECT_FALSE(s.cpu.usage_seconds);
  EXPECT_FALSE(s.io.read_bytes);
  // Values of files left intact are still there.
  const auto& want = expected.at("pods").at(0).at("sample");
  ASSERT_TRUE(s.memory.rss_bytes.has_value());
  EXPECT_EQ(*s.memory.rss_bytes, want["memory_rss_bytes"].get<uint64_t>());
  ASSERT_TRUE(s.cpu.limit_cores.has_value());
  EXPECT_DOUBLE_EQ(*s.cpu.limit_cores, want["cpu_limit_cores"].get<double>());
  ASSERT_TRUE(s.cpu_pressure.some_seconds.has_value());
}

}  // namespace
}  // namespace trainscope
