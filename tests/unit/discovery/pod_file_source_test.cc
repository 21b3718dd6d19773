#include "discovery/pod_file_source.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "log_capture.h"
#include "pod_builder.h"
#include "test_wait.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::FakePod;
using testing::LogCapture;
using testing::WaitUntil;

class PodFileSourceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "podfile-XXXXXX").string();
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ / "pods.json";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes through a rename, as kubectl/ConfigMap updates do, so a reader
  // never sees half a file.
  void WriteFile(const std::string& text) {
    const fs::path tmp = dir_ / "pods.json.tmp";
    {
      std::ofstream out(tmp);
      out << text;
    }
    fs::rename(tmp, path_);
  }
  void WritePods(const std::vector<std::string>& names) {
    std::vector<nlohmann::json> items;
    for (const auto& n : names) {
      FakePod p;
      p.name = n;
      p.namespace_name = "training";
      items.push_back(p.Build());
    }
    WriteFile(testing::BuildPodList(items).dump(2));
  }
  std::vector<std::string> Names() const {
    std::vector<std::string> out;
    auto pods = table_.Get();  // keeps the list alive through the loop
    for (const auto& p : *pods) out.push_back(p.name);
    return out;
  }
  std::unique_ptr<PodFileSource> MakeSource() {
    PodFileSourceOptions o;
    o.path = path_;
    o.poll_interval = 20ms;
    return std::make_unique<PodFileSource>(o, table_);
  }

  fs::path dir_, path_;
  PodTable table_;
};

TEST_F(PodFileSourceTest, LoadsAtStartWithRoles) {
  WritePods({"ctr-worker-1", "ctr-ps-0"});
  auto source = MakeSource();
  ASSERT_TRUE(source->Start().ok());
  EXPECT_TRUE(source->stats().ready);
  EXPECT_GT(source->stats().last_success_unix_seconds, 0);
  auto pods = table_.Get();
  ASSERT_EQ(pods->size(), 2u);
  EXPECT_EQ((*pods)[0].name, "ctr-ps-0");  // sorted
  EXPECT_EQ((*pods)[0].role, Role::kPs);
  EXPECT_EQ((*pods)[0].training_job, "ctr");
  EXPECT_EQ((*pods)[1].replica_index, 1);
}

TEST_F(PodFileSourceTest, RereadsOnChange) {
  WritePods({"a-ps-0"});
  auto source = MakeSource();
  ASSERT_TRUE(source->Start().ok());
  const uint64_t gen = table_.generation();
  WritePods({"a-ps-0", "a-worker-0"});
  ASSERT_TRUE(WaitUntil([&] { return table_.Get()->size() == 2; }));
  // Unchanged file: no further publications.
  const uint64_t after = table_.generation();
  EXPECT_GT(after, gen);
  std::this_thread::sleep_for(100ms);  // several polls with nothing to do
  EXPECT_EQ(table_.generation(), after);
  WritePods({});
  ASSERT_TRUE(WaitUntil([&] { return table_.Get()->empty(); }));
  EXPECT_EQ(source->stats().errors_total, 0u);
}

TEST_F(PodFileSourceTest, BadFileKeepsLastGoodListAndLogsOncePerChange) {
  LogCapture logs;
  WritePods({"a-ps-0"});
  auto source = MakeSource();
  ASSERT_TRUE(source->Start().ok());
  WriteFile("{\"items\": [");  // truncated
  ASSERT_TRUE(WaitUntil([&] { return source->stats().errors_total == 1; }));
  ASSERT_TRUE(logs.WaitFor("malformed JSON"));
  EXPECT_TRUE(logs.Contains(path_.string())) << logs.Dump();
  EXPECT_EQ(Names(), std::vector<std::string>{"a-ps-0"});
  std::this_thread::sleep_for(100ms);  // more polls of the same bad file
  EXPECT_EQ(source->stats().errors_total, 1u);
  EXPECT_EQ(logs.Count("malformed JSON"), 1u) << logs.Dump();

  // A structurally wrong pod is also rejected as a whole.
  WriteFile(R"({"items": [{"metadata": {"name": "no-uid"}}]})");
  ASSERT_TRUE(WaitUntil([&] { return source->stats().errors_total == 2; }));
  ASSERT_TRUE(logs.WaitFor("metadata.uid: missing"));
  EXPECT_EQ(Names(), std::vector<std::string>{"a-ps-0"});

  fs::remove(path_);
  ASSERT_TRUE(WaitUntil([&] { return source->stats().errors_total == 3; }));
  EXPECT_TRUE(logs.WaitFor("disappeared"));
  EXPECT_EQ(Names(), std::vector<std::string>{"a-ps-0"});

  WritePods({"b-worker-0"});
  ASSERT_TRUE(WaitUntil(
      [&] { return Names() == std::vector<std::string>{"b-worker-0"}; }));
}

TEST_F(PodFileSourceTest, MissingFileAtStartIsAnError) {
  auto source = MakeSource();
  Status st = source->Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find(path_.string()), std::string::npos);
  EXPECT_NE(st.message().find("does not exist"), std::string::npos);
  EXPECT_FALSE(source->stats().ready);
}

TEST_F(PodFileSourceTest, UnparseableFileAtStartIsAnError) {
  WriteFile("not json at all");
  auto source = MakeSource();
  Status st = source->Start();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("malformed JSON"), std::string::npos)
      << st.message();
  EXPECT_TRUE(table_.Get()->empty());
}

TEST_F(PodFileSourceTest, DropsFinishedPods) {
  FakePod running, done;
  running.name = "r";
  done.name = "d";
  done.phase = "Succeeded";
  WriteFile(testing::BuildPodList({running.Build(), done.Build()}).dump());
  auto source = MakeSource();
  ASSERT_TRUE(source->Start().ok());
  EXPECT_EQ(Names(), std::vector<std::string>{"r"});
}

TEST_F(PodFileSourceTest, StopIsPromptWithLongInterval) {
  WritePods({"a-ps-0"});
  PodFileSourceOptions o;
  o.path = path_;
  o.poll_interval = std::chrono::hours(1);
  PodFileSource source(o, table_);
  ASSERT_TRUE(source.Start().ok());
  const auto t0 = std::chrono::steady_clock::now();
  source.Stop();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}

// The fixture hosts' pod lists (Kubeflow and seed labels, plus one
// ordinary pod each) as the golden test and the agent read them.
class FixturePodFileTest : public ::testing::TestWithParam<std::string> {};

TEST_P(FixturePodFileTest, TrainingPodsGetTheirIdentity) {
  PodTable table;
  PodFileSourceOptions o;
  o.path = fs::path(TRAINSCOPE_SOURCE_DIR) / "tests" / "fixtures" / "hosts" /
           GetParam() / "pods.json";
  PodFileSource source(o, table);
  Status st = source.Start();
  ASSERT_TRUE(st.ok()) << st.message();
  auto pods = table.Get();
  ASSERT_GE(pods->size(), 3u);
  for (const auto& pod : *pods) {
    SCOPED_TRACE(pod.namespace_name + "/" + pod.name);
    EXPECT_EQ(pod.node, "node-a");
    EXPECT_FALSE(pod.containers.empty());
    if (pod.namespace_name != "training") {
      EXPECT_EQ(pod.role, Role::kUnknown);
      EXPECT_EQ(pod.training_job, "");
      continue;
    }
    TrainingIdentity from_name;
    ASSERT_TRUE(ParsePodNamePattern(pod.name, &from_name));
    EXPECT_EQ(pod.training_job, from_name.job);
    EXPECT_EQ(pod.role, from_name.role);
    EXPECT_EQ(pod.replica_index, from_name.index);
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, FixturePodFileTest,
                         ::testing::Values("v2-systemd", "v2-cgroupfs",
                                           "v1-systemd", "v1-cgroupfs",
                                           "hybrid-systemd"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace trainscope

namespace trainscope {
namespace {

// A PodList dumped from the whole cluster (kubectl get pods -A -o json) must
// not make this node export the pods of every other node.
TEST(PodFileSourceNodeTest, PodsOfOtherNodesAreLeftOut) {
  namespace fs = std::filesystem;
  std::string tmpl = (fs::temp_directory_path() / "podfile-XXXXXX").string();
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const fs::path dir = tmpl;
  std::vector<nlohmann::json> items;
  for (const auto& [name, node] :
       std::vector<std::pair<std::string, std::string>>{
           {"here-ps-0", "node-a"},
           {"there-ps-0", "node-b"},
           {"pending", ""}}) {
    testing::FakePod p;
    p.name = name;
    p.namespace_name = "training";
    p.node = node;
    items.push_back(p.Build());
  }
  std::ofstream(dir / "pods.json") << testing::BuildPodList(items).dump();
  PodTable table;
  PodFileSourceOptions o;
  o.path = dir / "pods.json";
  o.node_name = "node-a";
  PodFileSource source(o, table);
  ASSERT_TRUE(source.Start().ok());
  std::vector<std::string> names;
  for (const auto& p : *table.Get()) names.push_back(p.name);
  source.Stop();
  fs::remove_all(dir);
  EXPECT_EQ(names, (std::vector<std::string>{"here-ps-0", "pending"}));
}

}  // namespace
}  // namespace trainscope
