// --pod-filter / --pod-namespaces on the real agent: only the exposition is
// filtered; /api/v1/pods (what the detectors see) keeps every pod.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "agent_process.h"

namespace trainscope::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// The v2-systemd fixture host: ctr-ps-0 and ctr-worker-0 (TFJob, namespace
// training) and nginx-7c5ddbdf54-2xkqv (namespace web, no training role).
std::vector<std::string> Args(int port, std::vector<std::string> extra) {
  return FixtureHostArgs("127.0.0.1:" + std::to_string(port), std::move(extra));
}

// Sample lines (no comments) of a pod, by its pod label.
int SeriesOf(const std::string& metrics, const std::string& pod) {
  std::istringstream in(metrics);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && line[0] != '#' &&
        line.find("pod=\"" + pod + "\"") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

struct Scrape {
  std::string metrics;
  std::string pods;
};

Scrape ScrapeAgent(std::vector<std::string> extra) {
  const int port = FreePort();
  AgentProcess agent(Args(port, std::move(extra)));
  EXPECT_TRUE(agent.WaitHttpOk(port, "/readyz", std::chrono::seconds(10)))
      << agent.Stderr();
  Scrape s;
  s.metrics = HttpGet(port, "/metrics").value_or("");
  s.pods = HttpGet(port, "/api/v1/pods").value_or("");
  return s;
}

TEST(PodFilterTest, DefaultExportsTrainingPodsOnly) {
  Scrape s = ScrapeAgent({});
  EXPECT_GT(SeriesOf(s.metrics, "ctr-worker-0"), 20);
  EXPECT_GT(SeriesOf(s.metrics, "ctr-ps-0"), 20);
  EXPECT_EQ(SeriesOf(s.metrics, "nginx-7c5ddbdf54-2xkqv"), 0);
  EXPECT_THAT(s.metrics,
              HasSubstr("trainscope_pods_not_exported{node=\"node-a\"} 1\n"));
  // Node series are not pod series: untouched.
  EXPECT_THAT(s.metrics, HasSubstr("trainscope_node_cpus{node=\"node-a\"} 2"));
  // What the detectors see still holds every pod.
  EXPECT_THAT(s.pods, HasSubstr("nginx-7c5ddbdf54-2xkqv"));
}

TEST(PodFilterTest, AllExportsEveryPod) {
  Scrape s = ScrapeAgent({"--pod-filter", "all"});
  const int nginx = SeriesOf(s.metrics, "nginx-7c5ddbdf54-2xkqv");
  EXPECT_GT(nginx, 20);
  EXPECT_GT(SeriesOf(s.metrics, "ctr-worker-0"), 20);
  EXPECT_THAT(s.metrics,
              HasSubstr("trainscope_pods_not_exported{node=\"node-a\"} 0\n"));
}

TEST(PodFilterTest, NamespaceAllowlist) {
  Scrape web = ScrapeAgent({"--pod-filter", "all", "--pod-namespaces", "web"});
  EXPECT_GT(SeriesOf(web.metrics, "nginx-7c5ddbdf54-2xkqv"), 20);
  EXPECT_EQ(SeriesOf(web.metrics, "ctr-worker-0"), 0);
  EXPECT_THAT(web.metrics,
              HasSubstr("trainscope_pods_not_exported{node=\"node-a\"} 2\n"));
  // With the training filter the allowlist only narrows it further.
  Scrape narrowed = ScrapeAgent({"--pod-namespaces", "web, other"});
  EXPECT_THAT(narrowed.metrics, Not(HasSubstr("pod=\"")));
}

TEST(PodFilterTest, BadValuesExitNamingTheFlag) {
  for (const auto& [args, message] :
       std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--pod-filter", "training-only"}, "--pod-filter"},
           {{"--pod-namespaces", "Bad_NS"}, "--pod-namespaces"}}) {
    AgentProcess agent(Args(0, args));
    auto code = agent.WaitExit(std::chrono::seconds(10));
    ASSERT_TRUE(code.has_value()) << message;
    EXPECT_NE(*code, 0);
    EXPECT_LT(*code, 128);
    EXPECT_THAT(agent.Stderr(), HasSubstr(message));
  }
}

}  // namespace
}  // namespace trainscope::testing
