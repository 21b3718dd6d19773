// The cluster view end to end: a real Prometheus scrapes two fake "nodes"
// serving trainscope series of a job whose PS ctr-ps-0 (on node-b) carries
// ~80% of the PS traffic, seen from workers on both nodes; then
// `trainscope report --prometheus` must name ctr-ps-0 and no other PS.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "fake_agent_node.h"
#include "prometheus_support.h"

namespace trainscope::testing {
namespace {

using ::testing::HasSubstr;

CommandResult Report(std::vector<std::string> args) {
  args.insert(args.begin(), {TRAINSCOPE_CLI_BIN, "report"});
  return RunCommand(args, std::chrono::seconds(60));
}

TEST(PrometheusClusterViewTest, NamesTheHotPsAcrossNodes) {
  FakeAgentNode a("node-a", FakeAgentNode::kHotPs0);
  FakeAgentNode b("node-b", FakeAgentNode::kHotPs0);
  PrometheusServer prometheus({a.target(), b.target()});
  ASSERT_TRUE(prometheus.WaitReady(std::chrono::seconds(30)))
      << prometheus.Log();
  // Enough scrapes of both nodes for several evaluation windows.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::optional<double> samples;
  while (std::chrono::steady_clock::now() < deadline) {
    samples = prometheus.QueryScalar(
        "min(count_over_time(trainscope_peer_receive_bytes_total[1m]))");
    auto nodes = prometheus.QueryScalar("count(trainscope_node_cpu_count)");
    if (samples && *samples >= 14 && nodes && *nodes == 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  ASSERT_TRUE(samples && *samples >= 14) << prometheus.Log();

  auto r = Report({"--prometheus", prometheus.url(), "--range", "30", "--step",
                   "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out;
  EXPECT_EQ(report["node"], "cluster");
  std::vector<std::string> hot;
  for (const auto& d : report["diagnoses"]) {
    if (d["kind"] == "hot_parameter_server") hot.push_back(d["pod"]);
  }
  EXPECT_EQ(hot, std::vector<std::string>{"ctr-ps-0"}) << report.dump(2);
  ASSERT_EQ(report["jobs"].size(), 1u) << report.dump(2);
  const auto& job = report["jobs"][0];
  EXPECT_EQ(job["ps"].size(), 3u);
  EXPECT_EQ(job["workers"].size(), 4u);
  EXPECT_NEAR(job["ps_traffic_share"]["ctr-ps-0"].get<double>(), 0.8, 0.03);
  EXPECT_NEAR(job["ps_traffic_share"]["ctr-ps-1"].get<double>(), 0.1, 0.03);
  for (const auto& d : report["diagnoses"]) {
    if (d["kind"] != "hot_parameter_server") continue;
    EXPECT_EQ(d["training_job"], "ctr");
    EXPECT_EQ(d["namespace"], "training");
    EXPECT_EQ(d["severity"], "warning");
    EXPECT_EQ(d["evidence"]["ps"].size(), 3u);
  }

  // The table names it too; a namespace without the job shows nothing.
  auto text = Report({"--prometheus", prometheus.url(), "--range", "30",
                      "--step", "2", "--job", "ctr"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("hot_parameter_server"));
  EXPECT_THAT(text.out, HasSubstr("training/ctr-ps-0"));
  auto other = Report({"--prometheus", prometheus.url(), "--range", "30",
                       "--step", "2", "--namespace", "elsewhere", "--json"});
  ASSERT_EQ(other.exit_code, 0) << other.err;
  auto empty = nlohmann::json::parse(other.out, nullptr, false);
  ASSERT_FALSE(empty.is_discarded());
  EXPECT_TRUE(empty["diagnoses"].empty());
  EXPECT_TRUE(empty["jobs"].empty());
}

}  // namespace
}  // namespace trainscope::testing
