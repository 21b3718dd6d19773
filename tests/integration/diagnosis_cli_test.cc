// The report end to end on the real agent binary (fixture host tree) and
// the `trainscope report` command's edges: the report JSON schema, the text
// table, the exporter section, and clear errors for bad URLs and answers.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "agent_process.h"
#include "prometheus_support.h"

namespace trainscope::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::vector<std::string> FixtureArgs(int port) {
  return FixtureHostArgs("127.0.0.1:" + std::to_string(port));
}

CommandResult Report(std::vector<std::string> args) {
  args.insert(args.begin(), {TRAINSCOPE_CLI_BIN, "report"});
  return RunCommand(args, std::chrono::seconds(30));
}

class AgentReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = FreePort();
    agent_ = std::make_unique<AgentProcess>(FixtureArgs(port_));
    ASSERT_TRUE(agent_->WaitHttpOk(port_, "/readyz", std::chrono::seconds(10)))
        << agent_->Stderr();
    // A few samples so the engine has evaluated windows.
    std::this_thread::sleep_for(std::chrono::milliseconds(800));
  }
  std::string Url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }
  int port_ = 0;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(AgentReportTest, ReportJsonFollowsTheContract) {
  int status = 0;
  auto body = HttpGet(port_, "/api/v1/report", &status);
  ASSERT_TRUE(body);
  ASSERT_EQ(status, 200);
  auto report = nlohmann::json::parse(*body);
  ASSERT_TRUE(report["generated_at"].is_string());
  EXPECT_TRUE(
      std::regex_match(report["generated_at"].get<std::string>(),
                       std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_EQ(report["node"], "node-a");
  ASSERT_TRUE(report["diagnoses"].is_array());
  // The fixture's counters never move: nothing is wrong on this node.
  EXPECT_TRUE(report["diagnoses"].empty()) << report.dump(2);
  ASSERT_TRUE(report["jobs"].is_array());
  ASSERT_EQ(report["jobs"].size(), 1u) << report.dump(2);
  const auto& job = report["jobs"][0];
  EXPECT_EQ(job["namespace"], "training");
  EXPECT_EQ(job["training_job"], "ctr");
  EXPECT_EQ(job["ps"], nlohmann::json::array({"ctr-ps-0"}));
  EXPECT_EQ(job["workers"], nlohmann::json::array({"ctr-worker-0"}));
  EXPECT_TRUE(job["ps_traffic_share"].is_object());
}

TEST_F(AgentReportTest, CliPrintsTheAgentsTableAndJson) {
  auto text = Report({"--agent", Url()});
  EXPECT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, HasSubstr("Trainscope report for node node-a"));
  EXPECT_THAT(text.out, HasSubstr("No active diagnoses."));
  EXPECT_THAT(text.out, HasSubstr("training/ctr: 1 PS, 1 workers"));

  auto json = Report({"--agent", Url() + "/", "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  auto report = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << json.out;
  EXPECT_EQ(report["node"], "node-a");
  EXPECT_TRUE(report["diagnoses"].is_array());

  auto filtered =
      Report({"--agent", Url(), "--namespace", "elsewhere", "--json"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  auto none = nlohmann::json::parse(filtered.out, nullptr, false);
  ASSERT_FALSE(none.is_discarded());
  EXPECT_TRUE(none["jobs"].empty());
  auto job = Report({"--agent", Url(), "--job", "ctr", "--json"});
  ASSERT_EQ(job.exit_code, 0) << job.err;
  EXPECT_EQ(nlohmann::json::parse(job.out)["jobs"].size(), 1u);

  int status = 0;
  auto served = HttpGet(port_, "/api/v1/report?format=text", &status);
  ASSERT_TRUE(served);
  EXPECT_THAT(*served, HasSubstr("Trainscope report for node node-a"));
}

TEST_F(AgentReportTest, NoDiagnosisSeriesWhileNothingIsActive) {
  auto metrics = HttpGet(port_, "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(*metrics, HasSubstr("trainscope_pod_info"));
  EXPECT_THAT(*metrics, Not(HasSubstr("trainscope_diagnosis_active{")));
}

struct BadReport {
  const char* name;
  std::vector<std::string> args;
  int exit_code;
  const char* message;
};

class ReportBadInputTest : public ::testing::TestWithParam<BadReport> {};

TEST_P(ReportBadInputTest, FailsClearly) {
  std::vector<std::string> args;
  for (auto a : GetParam().args) {
    const std::string dead = "DEADPORT";
    if (auto at = a.find(dead); at != std::string::npos) {
      a.replace(at, dead.size(), std::to_string(FreePort()));
    }
    args.push_back(a);
  }
  auto r = Report(args);
  EXPECT_EQ(r.exit_code, GetParam().exit_code) << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ReportBadInputTest,
    ::testing::Values(
        BadReport{"no_source",
                  {},
                  2,
                  "--agent URL, --kubeconfig FILE --node NODE or "
                  "--prometheus URL"},
        BadReport{"not_http",
                  {"--agent", "ftp://host/"},
                  2,
                  "not an http:// or https:// URL"},
        BadReport{"no_host", {"--agent", "http://"}, 2, "has no host"},
        BadReport{
            "bad_port", {"--agent", "http://127.0.0.1:99999"}, 2, "bad port"},
        BadReport{"both_sources",
                  {"--agent", "http://a:1", "--prometheus", "http://b:2"},
                  2,
                  "excludes"},
        BadReport{"agent_unreachable",
                  {"--agent", "http://127.0.0.1:DEADPORT"},
                  1,
                  "cannot reach http://127.0.0.1:"},
        BadReport{"prometheus_unreachable",
                  {"--prometheus", "http://127.0.0.1:DEADPORT"},
                  1,
                  "cannot reach http://127.0.0.1:"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// A server that answers every GET with a fixed body.
class FixedServer {
 public:
  FixedServer(int status, std::string body) {
    server_.Get(
        ".*", [status, body](const httplib::Request&, httplib::Response& res) {
          res.status = status;
          res.set_content(body, "application/json");
        });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() before the loop runs would be lost and join() would hang.
    while (!server_.is_running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  ~FixedServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_);
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

TEST(ReportAnswersTest, NotJson) {
  FixedServer server(200, "<html>hello</html>");
  auto r = Report({"--agent", server.url()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("did not answer JSON"));
  auto p = Report({"--prometheus", server.url()});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_THAT(p.err, HasSubstr("did not answer JSON"));
}

TEST(ReportAnswersTest, JsonThatIsNoReport) {
  FixedServer server(200, R"({"hello": "world"})");
  auto r = Report({"--agent", server.url()});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("is not a Trainscope report"));
  // The first query lists the clusters behind the server (an instant
  // vector), the next the pods to cut batches from (another).
  auto clusters = Report({"--prometheus", server.url()});
  EXPECT_EQ(clusters.exit_code, 1);
  EXPECT_THAT(clusters.err, HasSubstr("gave no vector for count by (cluster)"));
  auto p = Report({"--prometheus", server.url(), "--cluster-label", ""});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_THAT(p.err, HasSubstr("gave no vector for group by"));
  auto one_window = Report({"--prometheus", server.url(), "--batch-series", "0",
                            "--cluster-label", ""});
  EXPECT_EQ(one_window.exit_code, 1);
  EXPECT_THAT(one_window.err, HasSubstr("gave no matrix"));
}

TEST(ReportAnswersTest, HttpErrorCarriesTheReason) {
  FixedServer server(
      400,
      R"({"status":"error","errorType":"bad_data","error":"parse error"})");
  auto p = Report({"--prometheus", server.url()});
  EXPECT_EQ(p.exit_code, 1);
  EXPECT_THAT(p.err, HasSubstr("HTTP 400: parse error"));
}

}  // namespace
}  // namespace trainscope::testing
