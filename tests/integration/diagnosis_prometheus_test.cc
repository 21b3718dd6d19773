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

#include "prometheus_support.h"

namespace trainscope::testing {
namespace {

using ::testing::HasSubstr;

struct FakePod {
  std::string name;
  std::string role;
  std::string node;
  double cpu_cores;
};

const std::vector<FakePod> kPods = {{"ctr-ps-0", "ps", "node-b", 0.6},
                                    {"ctr-ps-1", "ps", "node-a", 0.3},
                                    {"ctr-ps-2", "ps", "node-b", 0.3},
                                    {"ctr-worker-0", "worker", "node-a", 0.5},
                                    {"ctr-worker-1", "worker", "node-a", 0.5},
                                    {"ctr-worker-2", "worker", "node-b", 0.5},
                                    {"ctr-worker-3", "worker", "node-b", 0.5}};

// Bytes/s each worker exchanges with each PS, per direction: 80/10/10.
const std::map<std::string, double> kPsRates = {
    {"ctr-ps-0", 4e6}, {"ctr-ps-1", 0.5e6}, {"ctr-ps-2", 0.5e6}};

std::string PodLabels(const FakePod& p) {
  return "namespace=\"training\",pod=\"" + p.name +
         "\",training_job=\"ctr\",role=\"" + p.role + "\",replica_index=\"" +
         p.name.substr(p.name.rfind('-') + 1) + "\"";
}

// Trainscope-format exposition of one node at `t` seconds since start:
// counters grow at fixed rates, as an agent's would.
std::string Exposition(const std::string& node, double t) {
  std::ostringstream out;
  out << "# TYPE trainscope_pod_info gauge\n";
  for (const auto& p : kPods) {
    if (p.node != node) continue;
    out << "trainscope_pod_info{" << PodLabels(p) << ",node=\"" << node
        << "\",uid=\"uid-" << p.name << "\"} 1\n";
  }
  out << "# TYPE trainscope_pod_cpu_usage_seconds_total counter\n";
  for (const auto& p : kPods) {
    if (p.node != node) continue;
    out << "trainscope_pod_cpu_usage_seconds_total{" << PodLabels(p) << "} "
        << 100 + p.cpu_cores * t << "\n";
  }
  for (const char* dir : {"receive", "transmit"}) {
    out << "# TYPE trainscope_peer_" << dir << "_bytes_total counter\n";
    for (const auto& p : kPods) {
      if (p.node != node || p.role != "worker") continue;
      for (const auto& [ps, rate] : kPsRates) {
        out << "trainscope_peer_" << dir << "_bytes_total{" << PodLabels(p)
            << ",peer_namespace=\"training\",peer_pod=\"" << ps
            << "\",peer_role=\"ps\"} " << static_cast<uint64_t>(1e6 + rate * t)
            << "\n";
      }
    }
  }
  out << "# TYPE trainscope_node_cpu_count gauge\n"
      << "trainscope_node_cpu_count{node=\"" << node << "\"} 8\n";
  return out.str();
}

class FakeNode {
 public:
  explicit FakeNode(std::string node) : node_(std::move(node)) {
    start_ = std::chrono::steady_clock::now();
    server_.Get(
        "/metrics", [this](const httplib::Request&, httplib::Response& res) {
          const double t = std::chrono::duration<double>(
                               std::chrono::steady_clock::now() - start_)
                               .count();
          res.set_content(Exposition(node_, t), "text/plain; version=0.0.4");
        });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the loop runs would be lost and join() would hang.
    while (!server_.is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~FakeNode() {
    server_.stop();
    thread_.join();
  }
  std::string target() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  std::string node_;
  std::chrono::steady_clock::time_point start_;
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

CommandResult Report(std::vector<std::string> args) {
  args.insert(args.begin(), {TRAINSCOPE_CLI_BIN, "report"});
  return RunCommand(args, std::chrono::seconds(60));
}

TEST(PrometheusClusterViewTest, NamesTheHotPsAcrossNodes) {
  FakeNode a("node-a"), b("node-b");
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
