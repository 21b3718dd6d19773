#include "report_page/page.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "synthetic_report.h"

namespace trainscope::page {
namespace {

using ::testing::HasSubstr;
using testing::JobSpec;
using ::testing::Not;
using testing::SyntheticJob;
using testing::SyntheticReport;

nlohmann::json Diagnosis(const std::string& kind, const std::string& pod,
                         const std::string& severity = "warning") {
  return {{"kind", kind},
          {"severity", severity},
          {"namespace", "training"},
          {"training_job", "ctr"},
          {"pod", pod},
          {"since", "2026-11-23T15:59:00Z"},
          {"summary", pod + " is the problem."},
          {"evidence", {{"share", 0.87}, {"ps", {{"ctr-ps-0", 0.87}}}}},
          {"recommendations", {"Partition the embedding."}}};
}

TEST(PageTest, SelfContainedWithPolicyAndNoScripts) {
  auto report = SyntheticReport({SyntheticJob({.hot_share = 0.87})});
  const std::string html = RenderReportPage(report, {});
  EXPECT_THAT(html, HasSubstr("<meta http-equiv=\"Content-Security-Policy\" "
                              "content=\"default-src 'none';"));
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("http-equiv=\"refresh\"")));
  EXPECT_THAT(html, Not(HasSubstr("href=\"/metrics\"")));
  // Nothing fetched: the only URL is the SVG namespace.
  EXPECT_THAT(html, Not(HasSubstr("src=")));
  EXPECT_THAT(html, Not(HasSubstr("url(")));
  EXPECT_THAT(html, Not(HasSubstr("@import")));
}

TEST(PageTest, AgentPageLinksAndRefreshes) {
  const std::string html = RenderReportPage(
      SyntheticReport({}), {.agent_links = true, .refresh_seconds = 10});
  EXPECT_THAT(html, HasSubstr("<meta http-equiv=\"refresh\" content=\"10\">"));
  for (const char* link : {"/metrics", "/api/v1/report", "/api/v1/pods"}) {
    EXPECT_THAT(html, HasSubstr(std::string("href=\"") + link + "\""));
  }
  EXPECT_THAT(html, HasSubstr("No training pods recognised"));
}

TEST(PageTest, MarksTheHotPsAndTheStraggler) {
  auto report = SyntheticReport({SyntheticJob({.hot_share = 0.87})});
  report["diagnoses"] = {
      Diagnosis("straggler_worker", "ctr-worker-3"),
      Diagnosis("hot_parameter_server", "ctr-ps-0", "critical")};
  const std::string html = RenderReportPage(report, {});
  EXPECT_THAT(html, HasSubstr("class=\"pod ps hot marked sev-critical\" "
                              "data-role=\"ps\" data-pod=\"ctr-ps-0\" "
                              "data-hot=\"true\""));
  EXPECT_THAT(html, HasSubstr("data-pod=\"ctr-worker-3\" "
                              "data-straggler=\"true\" "
                              "data-kinds=\"straggler_worker\""));
  // Critical first, with its evidence and recommendation.
  EXPECT_LT(html.find("data-kind=\"hot_parameter_server\""),
            html.find("data-kind=\"straggler_worker\""));
  EXPECT_THAT(html, HasSubstr("<p class=\"headline sev-critical\">ctr-ps-0 is "
                              "the problem.</p>"));
  EXPECT_THAT(html, HasSubstr("<li>Partition the embedding.</li>"));
  EXPECT_THAT(html, HasSubstr("<th>share</th><td>0.87</td>"));
}

TEST(PageTest, HostileStringsAreShownLiterally) {
  const std::string evil = "<script>alert(1)</script>\"'><img src=x>";
  JobSpec spec{
      .namespace_name = evil, .name = "j" + evil, .ps = 2, .workers = 2};
  auto job = SyntheticJob(spec);
  job["ps"].push_back(evil);
  job["ps_traffic_share"][evil] = 0.5;
  job["pod_nodes"][evil] = evil;
  auto report = SyntheticReport({job}, evil);
  auto d = Diagnosis(evil, evil, evil);
  d["namespace"] = evil;
  d["summary"] = evil;
  d["evidence"] = {{evil, evil}};
  d["recommendations"] = {evil};
  report["diagnoses"] = nlohmann::json::array({d});
  report["generated_at"] = evil;
  const std::string html = RenderReportPage(report, {.agent_links = true});
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, Not(HasSubstr("\"'>")));
  EXPECT_THAT(html, HasSubstr("&lt;script&gt;alert(1)&lt;/script&gt;"
                              "&quot;&#39;&gt;&lt;img src=x&gt;"));
}

TEST(PageTest, OddInputRendersWithoutThrowing) {
  for (const char* text :
       {"{}", "[]", "null", R"({"jobs": 5, "diagnoses": "x"})",
        R"({"jobs": [{"ps": [1, null], "workers": {"a": 1},
           "links": [{"worker": 3}], "ps_traffic_share": {"p": "x"}}],
           "diagnoses": [{"kind": 1, "evidence": [1], "recommendations": 7}]})"}) {
    SCOPED_TRACE(text);
    std::string html;
    EXPECT_NO_THROW(html = RenderReportPage(nlohmann::json::parse(text), {}));
    EXPECT_THAT(html, HasSubstr("</html>"));
  }
}

TEST(PageTest, NodeLevelDiagnosisMarksTheNodeFrame) {
  auto report = SyntheticReport({SyntheticJob({.nodes = 2})}, "cluster");
  report["diagnoses"] = {{{"kind", "network_saturated"},
                          {"severity", "warning"},
                          {"namespace", ""},
                          {"pod", ""},
                          {"node", "node-1"},
                          {"summary", "node-1's uplink is full."}}};
  const std::string html = RenderReportPage(report, {});
  EXPECT_THAT(html, HasSubstr("<g class=\"node-group marked\" "
                              "data-node=\"node-1\">"));
  EXPECT_THAT(html, HasSubstr("Other diagnoses"));
  EXPECT_THAT(html, HasSubstr("Trainscope — cluster"));
}

TEST(PageTest, TwoHundredWorkersStayASmallPage) {
  // Bundled edges keep the page small (speed: bench/micro).
  auto report =
      SyntheticReport({SyntheticJob({.ps = 20, .workers = 200, .nodes = 10})});
  const std::string html = RenderReportPage(report, {});
  EXPECT_LT(html.size(), 512u << 10);
  EXPECT_THAT(html, HasSubstr("edges bundled per node"));
}

}  // namespace
}  // namespace trainscope::page
