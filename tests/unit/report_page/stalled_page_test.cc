// A stalled job on the report page: its stall and per-rank table come
// before everything else (issue 33), the suspect's row stands out, and its
// pod names, which come from the cluster, are escaped.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "report_page/model.h"
#include "report_page/page.h"
#include "synthetic_report.h"

namespace trainscope::page {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::SyntheticJob;
using testing::SyntheticReport;

nlohmann::json Rank(const std::string& pod, const std::string& state,
                    bool suspect) {
  return {{"pod", pod},
          {"node", "node-0"},
          {"role", "worker"},
          {"state", state},
          {"processes",
           {{"running", state == "R" ? 1 : 0},
            {"sleeping", state == "S" ? 1 : 0},
            {"disk_sleep", 0},
            {"stopped", 0},
            {"zombie", 0}}},
          {"cpu_cores", state == "R" ? 0.98 : 0.0},
          {"quiet_seconds", 23.0},
          {"transmit_bytes_per_second", 0},
          {"receive_bytes_per_second", 0},
          {"suspect", suspect}};
}

// The stall of job `job` (3 workers), blaming `suspect` ("" = no rank
// differs).
nlohmann::json Stall(const std::string& job, const std::string& suspect,
                     const std::string& severity = "critical") {
  nlohmann::json ranks = nlohmann::json::array();
  for (int w = 0; w < 3; ++w) {
    const std::string pod = job + "-worker-" + std::to_string(w);
    ranks.push_back(Rank(pod, pod == suspect ? "R" : "S", pod == suspect));
  }
  return {{"kind", "training_stalled"},
          {"severity", severity},
          {"namespace", "training"},
          {"training_job", job},
          {"pod", suspect},
          {"since", "2026-11-23T15:59:30Z"},
          {"summary", "Job training/" + job + " has made no step for 23 s."},
          {"evidence",
           {{"suspect_reason", suspect.empty() ? "all_waiting" : "computing"},
            {"stalled_seconds", 23.0},
            {"threshold_seconds", 10},
            {"ranks", ranks}}},
          {"recommendations", {"Dump the suspect's stack (py-spy dump)."}}};
}

nlohmann::json HotPs() {
  return {{"kind", "hot_parameter_server"},
          {"severity", "critical"},
          {"namespace", "training"},
          {"training_job", "ctr"},
          {"pod", "ctr-ps-0"},
          {"summary", "ctr-ps-0 carries 87% of the PS traffic."},
          {"evidence", {{"expected_speedup", 3.0}}}};
}

// Two jobs, the stalled one ("zeta") listed last by the agent.
nlohmann::json TwoJobs() {
  return SyntheticReport(
      {SyntheticJob({.name = "ctr", .hot_share = 0.87}),
       SyntheticJob({.name = "zeta", .ps = 0, .workers = 3})});
}

TEST(StalledPageTest, StallAndItsRankTableComeFirst) {
  auto report = TwoJobs();
  report["diagnoses"] = {HotPs(), Stall("zeta", "zeta-worker-1")};
  const std::string html = RenderReportPage(report, {});
  const size_t banner = html.find("<section class=\"stalled\" id=\"stalled\">");
  ASSERT_NE(banner, std::string::npos);
  // The banner, holding the rank table, precedes every job and diagnosis.
  EXPECT_LT(banner, html.find("<section class=\"job\""));
  EXPECT_LT(banner, html.find("data-kind=\"hot_parameter_server\""));
  EXPECT_EQ(html.find("<table"), html.find("<table class=\"ranks\">"));
  EXPECT_GT(html.find("<table class=\"ranks\">"), banner);
  EXPECT_THAT(html, HasSubstr("<p class=\"headline sev-critical\">Job "
                              "training/zeta has made no step for 23 s.</p>"));
  // The suspect's row is marked, in words too; the others are not.
  EXPECT_THAT(html,
              HasSubstr("<tr class=\"suspect\" data-pod=\"zeta-worker-1\">"
                        "<td class=\"mark\">suspect</td>"
                        "<td>zeta-worker-1</td><td>node-0</td>"
                        "<td>worker</td><td>R running</td><td>1R</td>"
                        "<td class=\"num\">0.98</td>"
                        "<td class=\"num\">23.0 s</td>"));
  EXPECT_THAT(html, HasSubstr("<tr data-pod=\"zeta-worker-0\">"));
  EXPECT_THAT(html,
              Not(HasSubstr("class=\"suspect\" data-pod=\"zeta-worker-0")));
  // The stalled job's section comes first and points at the table; the
  // suspect's box carries the kind's tag.
  EXPECT_LT(html.find("<section class=\"job\" data-namespace=\"training\" "
                      "data-job=\"zeta\">"),
            html.find("data-job=\"ctr\">"));
  EXPECT_THAT(html, HasSubstr("<a href=\"#stalled\">"));
  EXPECT_THAT(html, HasSubstr(">STOP</text>"));
  // The ranks are drawn as the table, not dumped again as evidence JSON.
  EXPECT_THAT(html, Not(HasSubstr("<th>ranks</th>")));
  EXPECT_THAT(html, HasSubstr("<th>suspect_reason</th><td>computing</td>"));
}

TEST(StalledPageTest, OneStoppedWorkerLeadsACriticalHotPs) {
  // A warning stall (one worker of an asynchronous job) still leads.
  auto report = TwoJobs();
  report["diagnoses"] = {HotPs(), Stall("zeta", "zeta-worker-2", "warning")};
  const std::string html = RenderReportPage(report, {});
  EXPECT_LT(html.find("data-kind=\"training_stalled\""),
            html.find("data-kind=\"hot_parameter_server\""));
  const ReportModel m = ModelOf(report);
  ASSERT_EQ(m.diagnoses.size(), 2u);
  EXPECT_EQ(m.diagnoses[0].kind, "training_stalled");
  EXPECT_EQ(m.jobs.at(0).training_job, "zeta");
  EXPECT_TRUE(m.jobs[0].stalled);
  EXPECT_FALSE(m.jobs[1].stalled);
}

TEST(StalledPageTest, JobWideStallBelongsToItsJob) {
  // No rank differs: the diagnosis names the job only, and is shown with
  // that job rather than under "Other diagnoses".
  auto report = TwoJobs();
  report["diagnoses"] = nlohmann::json::array({Stall("zeta", "")});
  const std::string html = RenderReportPage(report, {});
  const ReportModel m = ModelOf(report);
  ASSERT_EQ(m.jobs.at(0).training_job, "zeta");
  EXPECT_EQ(m.jobs[0].diagnoses, std::vector<size_t>{0});
  EXPECT_THAT(html, Not(HasSubstr("Other diagnoses")));
  EXPECT_THAT(html, HasSubstr("&mdash; job training/zeta</h3>"));
  EXPECT_THAT(html, HasSubstr("<table class=\"ranks\">"));
  EXPECT_THAT(html, Not(HasSubstr("<tr class=\"suspect\"")));
  EXPECT_THAT(html, HasSubstr("<th>suspect_reason</th><td>all_waiting</td>"));
}

TEST(StalledPageTest, RankNamesAreEscaped) {
  const std::string evil = "<script>alert(1)</script>\"'><img src=x>";
  auto report = TwoJobs();
  auto stall = Stall("zeta", "zeta-worker-1");
  auto& rank = stall["evidence"]["ranks"][1];
  rank["pod"] = evil;
  rank["node"] = evil;
  rank["role"] = evil;
  rank["state"] = evil;
  rank["unanswered_peer"] = evil;
  report["diagnoses"] = nlohmann::json::array({stall});
  const std::string html = RenderReportPage(report, {});
  EXPECT_THAT(html, Not(HasSubstr("<script")));
  EXPECT_THAT(html, Not(HasSubstr("<img")));
  EXPECT_THAT(html, HasSubstr("<tr class=\"suspect\" data-pod=\"&lt;script&gt;"
                              "alert(1)&lt;/script&gt;&quot;&#39;&gt;&lt;img "
                              "src=x&gt;\">"));
}

TEST(StalledPageTest, MistypedRanksRenderWithoutThrowing) {
  auto report = TwoJobs();
  auto stall = Stall("zeta", "zeta-worker-1");
  stall["evidence"]["ranks"] = {
      {{"pod", 5}, {"suspect", "yes"}, {"cpu_cores", "x"}}, "junk", nullptr};
  report["diagnoses"] = nlohmann::json::array({stall});
  std::string html;
  EXPECT_NO_THROW(html = RenderReportPage(report, {}));
  EXPECT_THAT(html, HasSubstr("<table class=\"ranks\">"));
  EXPECT_THAT(html, Not(HasSubstr("<tr class=\"suspect\"")));
  stall["evidence"]["ranks"] = "none";
  report["diagnoses"] = nlohmann::json::array({stall});
  EXPECT_NO_THROW(html = RenderReportPage(report, {}));
  EXPECT_THAT(html, Not(HasSubstr("<table class=\"ranks\">")));
  EXPECT_THAT(html, HasSubstr("<section class=\"stalled\""));
}

}  // namespace
}  // namespace trainscope::page
