// `trainscope report` text for a stalled job: the stall leads, and its
// per-rank table follows the summary in aligned columns.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "diagnosis/diagnosis.h"
#include "report/report_json.h"
#include "report/stall_text.h"

namespace trainscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

nlohmann::json Rank(const std::string& pod, const std::string& state,
                    double cpu, double tx, double rx, bool suspect) {
  return {{"pod", pod},
          {"node", "node-a"},
          {"role", "worker"},
          {"state", state},
          {"processes",
           {{"running", state == "R" ? 1 : 0},
            {"sleeping", state == "S" ? 2 : 0},
            {"disk_sleep", 0},
            {"stopped", 0},
            {"zombie", 0}}},
          {"cpu_cores", cpu},
          {"quiet_seconds", 23.0},
          {"transmit_bytes_per_second", tx},
          {"receive_bytes_per_second", rx},
          {"suspect", suspect}};
}

diagnosis::Diagnosis Stall() {
  diagnosis::Diagnosis d;
  d.kind = std::string(diagnosis::kTrainingStalled);
  d.severity = diagnosis::Severity::kCritical;
  d.namespace_name = "training";
  d.training_job = "bert";
  d.pod = "bert-worker-1";
  d.node = "node-a";
  d.since = std::chrono::system_clock::from_time_t(1795874400);
  d.summary =
      "Job training/bert has made no step for 23 s: bert-worker-1 is "
      "computing while the other ranks wait on it";
  nlohmann::json waiting = Rank("bert-worker-0", "S", 0.01, 0, 0, false);
  waiting["unanswered_peer"] = "training/bert-worker-1";
  waiting["node"] = "node-bb";
  d.evidence = {{"suspect_reason", "computing"},
                {"stalled_seconds", 23.0},
                {"median_step_seconds", 0.31},
                {"threshold_seconds", 10},
                {"ranks",
                 {waiting, Rank("bert-worker-1", "R", 0.98, 0, 0, true),
                  Rank("bert-worker-2", "S", 0, 1234.0, 2500000.0, false)}}};
  d.recommendations = {"Dump the stack of bert-worker-1 (py-spy dump)."};
  return d;
}

std::string TextOf(const std::vector<diagnosis::Diagnosis>& ds) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& d : ds) list.push_back(diagnosis::DiagnosisJson(d));
  return ReportText(
      ReportView("node-a", {}, list, std::chrono::system_clock::now()));
}

// The lines of `text` from the one starting with `first` on, `n` of them.
std::string LinesFrom(const std::string& text, const std::string& first,
                      size_t n) {
  const size_t at = text.find("\n" + first);
  if (at == std::string::npos) return "";
  std::istringstream in(text.substr(at + 1));
  std::string line, out;
  for (size_t i = 0; i < n && std::getline(in, line); ++i) out += line + "\n";
  return out;
}

TEST(ReportStallTextTest, RankTableFollowsTheSummary) {
  const std::string text = TextOf({Stall()});
  // Golden: columns aligned to the widest cell, numbers right-aligned, the
  // suspect starred, the waited-on peer last.
  EXPECT_EQ(
      LinesFrom(text, "critical ", 6),
      "critical  training_stalled                training/bert-worker-1        "
      "2026-11-28T14:00:00Z  Job training/bert has made no step for 23 s: "
      "bert-worker-1 is computing while the other ranks wait on it\n"
      "          per rank (* = suspect, computing); stall threshold 10 s, "
      "median step 0.31 s:\n"
      "             POD            NODE     ROLE    STATE  PROCS   CPU   "
      "QUIET  TX B/s  RX B/s  WAITS ON\n"
      "             bert-worker-0  node-bb  worker  S      2S     0.01  "
      "23.0 s       0       0  training/bert-worker-1\n"
      "          *  bert-worker-1  node-a   worker  R      1R     0.98  "
      "23.0 s       0       0\n"
      "             bert-worker-2  node-a   worker  S      2S     0.00  "
      "23.0 s   1.23k    2.5M\n");
  // The scalar evidence and the advice still follow the table.
  EXPECT_THAT(text, HasSubstr("evidence: median_step_seconds=0.31"));
  EXPECT_THAT(text, HasSubstr("-> Dump the stack of bert-worker-1"));
}

TEST(ReportStallTextTest, StallLeadsTheReport) {
  diagnosis::Diagnosis hot;
  hot.kind = std::string(diagnosis::kHotParameterServer);
  hot.severity = diagnosis::Severity::kCritical;
  hot.namespace_name = "training";
  hot.pod = "ctr-ps-0";
  hot.evidence = {{"expected_speedup", 2.5}};
  std::vector<diagnosis::Diagnosis> ds = {hot, Stall()};
  diagnosis::SortByExpectedGain(ds);
  const std::string text = TextOf(ds);
  EXPECT_LT(text.find("training_stalled"), text.find("hot_parameter_server"));
}

TEST(ReportStallTextTest, StallsLeadAReportThatCameInAnotherOrder) {
  // A saved file or an older agent: the text still puts stalls first,
  // critical before warning, the rest in their order.
  diagnosis::Diagnosis hot;
  hot.kind = std::string(diagnosis::kHotParameterServer);
  hot.severity = diagnosis::Severity::kCritical;
  hot.pod = "ctr-ps-0";
  diagnosis::Diagnosis throttled = hot;
  throttled.kind = std::string(diagnosis::kCpuThrottled);
  diagnosis::Diagnosis one_worker = Stall();
  one_worker.severity = diagnosis::Severity::kWarning;
  one_worker.pod = "ctr-worker-4";
  const std::string text = TextOf({hot, one_worker, throttled, Stall()});
  const size_t critical_stall = text.find("training/bert-worker-1 ");
  const size_t warning_stall = text.find("training/ctr-worker-4 ");
  ASSERT_NE(warning_stall, std::string::npos);
  EXPECT_LT(critical_stall, warning_stall);
  EXPECT_LT(warning_stall, text.find("hot_parameter_server"));
  EXPECT_LT(text.find("hot_parameter_server"), text.find("cpu_throttled"));
}

TEST(ReportStallTextTest, AllWaitingJobHasNoSuspectColumn) {
  diagnosis::Diagnosis d = Stall();
  d.pod.clear();
  d.evidence["suspect_reason"] = "all_waiting";
  for (auto& r : d.evidence["ranks"]) {
    r["suspect"] = false;
    r.erase("unanswered_peer");
  }
  EXPECT_THAT(TextOf({d}),
              HasSubstr("critical  training_stalled                "
                        "job/training/bert "));
  const std::string table = StallRanksText(d.evidence, "  ");
  EXPECT_THAT(table, StartsWith("  per rank (* = suspect, all_waiting)"));
  EXPECT_THAT(table, HasSubstr("\n  POD "));
  EXPECT_THAT(table, Not(HasSubstr("*  ")));
  EXPECT_THAT(table, Not(HasSubstr("WAITS ON")));
}

TEST(ReportStallTextTest, MistypedRanksPrintAsDashes) {
  const nlohmann::json evidence = {
      {"ranks",
       {{{"pod", 7}, {"cpu_cores", "x"}, {"processes", "none"}}, "junk", 3}}};
  const std::string table = StallRanksText(evidence, "");
  // No suspect and no waited-on peer: neither column is drawn.
  EXPECT_EQ(table,
            "per rank (* = suspect):\n"
            "POD  NODE  ROLE  STATE  PROCS  CPU  QUIET  TX B/s  RX B/s\n"
            "-    -     -     -      -        -      -       -       -\n");
  EXPECT_EQ(StallRanksText({{"ranks", "none"}}, ""), "");
  EXPECT_EQ(StallRanksText(nlohmann::json::array(), ""), "");
}

TEST(ReportStallTextTest, LargeJobShowsSuspectsAndCountsTheRest) {
  nlohmann::json ranks = nlohmann::json::array();
  for (int i = 0; i < 200; ++i) {
    ranks.push_back(
        Rank("big-worker-" + std::to_string(i), "S", 0, 0, 0, i == 150));
  }
  const std::string table = StallRanksText({{"ranks", ranks}}, "");
  EXPECT_THAT(table, HasSubstr("*  big-worker-150 "));
  EXPECT_THAT(table, HasSubstr("big-worker-38 "));
  EXPECT_THAT(table, Not(HasSubstr("big-worker-39 ")));
  EXPECT_THAT(table, HasSubstr("... and 160 more ranks (--json has them all)"));
}

}  // namespace
}  // namespace trainscope
