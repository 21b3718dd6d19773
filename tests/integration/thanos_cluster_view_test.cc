// The cluster view of two clusters behind Thanos Query: two real Prometheus
// servers, each scraping the agents of one cluster (external label
// cluster="a" / "b"), each with a real Thanos sidecar, and one Thanos Query
// over both. The clusters run jobs of the same names: in a, ctr-ps-0 carries
// 80% of the PS traffic; in b the PS are balanced. Judged as one, the two
// would blur into one job of 4 PS-sides per pod; judged per cluster, only
// a's ctr-ps-0 is hot, and the report says which cluster it is in.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "fake_agent_node.h"
#include "prometheus_support.h"

namespace trainscope::testing {
namespace {

using ::testing::HasSubstr;

CommandResult Report(std::vector<std::string> args) {
  args.insert(args.begin(), {TRAINSCOPE_CLI_BIN, "report"});
  return RunCommand(args, std::chrono::seconds(90));
}

nlohmann::json ReportJson(std::vector<std::string> args) {
  args.push_back("--json");
  CommandResult r = Report(args);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out << r.err;
  return j;
}

// (cluster, pod) of every hot_parameter_server diagnosis.
std::vector<std::pair<std::string, std::string>> HotPs(
    const nlohmann::json& report) {
  std::vector<std::pair<std::string, std::string>> hot;
  for (const auto& d : report["diagnoses"]) {
    if (d["kind"] == "hot_parameter_server")
      hot.emplace_back(d.value("cluster", "-"), d["pod"]);
  }
  return hot;
}

// A cluster's two agent nodes and its Prometheus with a sidecar.
struct Cluster {
  Cluster(const std::string& name, FakeAgentNode::PsRates rates,
          const std::string& thanos)
      : a("node-a", rates),
        b("node-b", rates),
        prometheus({a.target(), b.target()}, {{"cluster", name}}) {
    if (prometheus.WaitReady(std::chrono::seconds(30)))
      sidecar = ThanosServer::Sidecar(thanos, prometheus);
  }
  FakeAgentNode a, b;
  PrometheusServer prometheus;
  std::unique_ptr<ThanosServer> sidecar;
};

TEST(ThanosClusterViewTest, JudgesEachClusterAloneAndNamesIt) {
  const std::string thanos = ThanosBinary(TRAINSCOPE_SOURCE_DIR);
  ASSERT_FALSE(thanos.empty())
      << "no thanos in the tool cache: bash scripts/install-platform.sh";
  Cluster a("a", FakeAgentNode::kHotPs0, thanos);
  Cluster b("b", FakeAgentNode::kBalanced, thanos);
  ASSERT_TRUE(a.sidecar && b.sidecar)
      << a.prometheus.Log() << b.prometheus.Log();
  ASSERT_TRUE(a.sidecar->WaitReady(std::chrono::seconds(30)))
      << a.sidecar->Log();
  ASSERT_TRUE(b.sidecar->WaitReady(std::chrono::seconds(30)))
      << b.sidecar->Log();
  auto query = ThanosServer::Query(
      thanos, {a.sidecar->grpc_endpoint(), b.sidecar->grpc_endpoint()});
  ASSERT_TRUE(query->WaitReady(std::chrono::seconds(30))) << query->Log();

  // Enough scrapes in both clusters, seen through Thanos Query (which
  // finds its endpoints a few seconds after it starts).
  PrometheusServer& pa = a.prometheus;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  bool ready = false;
  while (!ready && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    auto samples = pa.QueryScalar(
        "min(count_over_time(trainscope_peer_receive_bytes_total[1m]))");
    auto through = Report({"--prometheus", query->url(), "--range", "30",
                           "--step", "2", "--json"});
    auto j = nlohmann::json::parse(through.out, nullptr, false);
    ready = samples && *samples >= 14 && !j.is_discarded() &&
            j["source"].value("clusters", nlohmann::json::array()).size() == 2;
  }
  ASSERT_TRUE(ready) << query->Log() << pa.Log() << a.sidecar->Log()
                     << b.sidecar->Log();

  // Across both clusters: a's ctr-ps-0 only, with its cluster.
  const auto started = std::chrono::steady_clock::now();
  nlohmann::json both = ReportJson(
      {"--prometheus", query->url(), "--range", "30", "--step", "2"});
  const double through_thanos =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  using Hot = std::vector<std::pair<std::string, std::string>>;
  EXPECT_EQ(HotPs(both), (Hot{{"a", "ctr-ps-0"}})) << both.dump(1);
  ASSERT_EQ(both["jobs"].size(), 2u) << both.dump(1);
  for (const auto& job : both["jobs"]) {
    EXPECT_EQ(job["ps"].size(), 3u);
    EXPECT_EQ(job["workers"].size(), 4u);
    const double share0 = job["ps_traffic_share"]["ctr-ps-0"].get<double>();
    EXPECT_NEAR(share0, job["cluster"] == "a" ? 0.8 : 1.0 / 3, 0.03)
        << job.dump();
  }
  EXPECT_EQ(both["source"]["cluster_label"], "cluster");

  // One cluster at a time, by --selector.
  nlohmann::json only_a =
      ReportJson({"--prometheus", query->url(), "--range", "30", "--step", "2",
                  "--selector", "cluster=\"a\""});
  EXPECT_EQ(HotPs(only_a), (Hot{{"a", "ctr-ps-0"}})) << only_a.dump(1);
  nlohmann::json only_b =
      ReportJson({"--prometheus", query->url(), "--range", "30", "--step", "2",
                  "--selector", "cluster=\"b\""});
  EXPECT_TRUE(HotPs(only_b).empty()) << only_b.dump(1);
  ASSERT_EQ(only_b["jobs"].size(), 1u);
  EXPECT_EQ(only_b["jobs"][0]["cluster"], "b");

  // Judged as one cluster (--cluster-label ''), the two jobs of the same
  // name blur: ctr-ps-0's share is the mean of 0.8 and 1/3.
  nlohmann::json blurred =
      ReportJson({"--prometheus", query->url(), "--range", "30", "--step", "2",
                  "--cluster-label", ""});
  ASSERT_EQ(blurred["jobs"].size(), 1u) << blurred.dump(1);
  EXPECT_NEAR(blurred["jobs"][0]["ps_traffic_share"]["ctr-ps-0"].get<double>(),
              (0.8 * 5 + 1.0 / 3 * 3) / 8, 0.05);

  // One Prometheus of one cluster: no external label in its answers, no
  // split, no cluster in the report.
  const auto direct_started = std::chrono::steady_clock::now();
  nlohmann::json direct = ReportJson(
      {"--prometheus", b.prometheus.url(), "--range", "30", "--step", "2"});
  std::printf(
      "[thanos] report of 2 clusters through Thanos Query %.2f s (%d "
      "evaluations); of one cluster from its Prometheus %.2f s\n",
      through_thanos, both["source"].value("evaluations", 0),
      std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                    direct_started)
          .count());
  EXPECT_TRUE(HotPs(direct).empty()) << direct.dump(1);
  ASSERT_EQ(direct["jobs"].size(), 1u);
  EXPECT_FALSE(direct["jobs"][0].contains("cluster"));
  EXPECT_FALSE(direct["source"].contains("clusters"));

  // The table names the cluster.
  CommandResult text =
      Report({"--prometheus", query->url(), "--range", "30", "--step", "2"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("a:training/ctr-ps-0"));
  EXPECT_THAT(text.out, HasSubstr("b:training/ctr:"));
}

TEST(ThanosClusterViewTest, RefusesABadClusterLabel) {
  CommandResult r = Report(
      {"--prometheus", "http://127.0.0.1:1", "--cluster-label", "not a label"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not a Prometheus label name"));
}

}  // namespace
}  // namespace trainscope::testing
