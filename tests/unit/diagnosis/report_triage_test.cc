// The cluster view's triage (agent/cli/report_triage.h): which jobs, pods
// and nodes recorded Prometheus answers flag, against the detectors'
// default settings.
#include "cli/report_triage.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace trainscope::cli {
namespace {

using nlohmann::json;

// One instant-vector series with these labels and value.
json Series(json labels, double value) {
  return {{"metric", std::move(labels)},
          {"value", json::array({1795457445.0, std::to_string(value)})}};
}

json Pod(const std::string& job, const std::string& pod,
         const std::string& role = "") {
  json m = {{"namespace", "ml"}, {"training_job", job}, {"pod", pod}};
  if (!role.empty()) m["role"] = role;
  return m;
}

// A job's per-PS or per-worker values as a recorded-rule answer; with a
// PSI `resource` label when given.
json JobValues(const std::string& job, const std::string& role,
               const std::vector<double>& values,
               const std::string& resource = "") {
  json out = json::array();
  for (size_t i = 0; i < values.size(); ++i) {
    json labels = Pod(job, job + "-" + role + "-" + std::to_string(i), role);
    if (!resource.empty()) labels["resource"] = resource;
    out.push_back(Series(std::move(labels), values[i]));
  }
  return out;
}

std::vector<PodRef> Roster(const std::string& job, size_t ps, size_t workers,
                           const std::string& node = "node-a") {
  std::vector<PodRef> out;
  for (size_t i = 0; i < ps; ++i) {
    out.push_back({"ml", job + "-ps-" + std::to_string(i), job, "ps", node});
  }
  for (size_t i = 0; i < workers; ++i) {
    out.push_back(
        {"ml", job + "-worker-" + std::to_string(i), job, "worker", node});
  }
  return out;
}

Suspects Judge(const std::map<std::string, json>& answers,
               const std::vector<PodRef>& roster) {
  Suspects s;
  const Status status =
      JudgeTriage(answers, roster, diagnosis::DiagnosisSettings{}, &s);
  EXPECT_TRUE(status.ok()) << status.message();
  return s;
}

bool Flagged(const Suspects& s, const std::string& job) {
  return s.jobs.count({"ml", job}) > 0;
}

struct JobCase {
  const char* name;
  const char* query;  // "pressure/io": the pressure answer, resource io
  const char* role;
  std::vector<double> values;
  size_t roster_ps;  // the job's PS in the roster
  bool flagged;
};

class TriageJobTest : public ::testing::TestWithParam<JobCase> {};

TEST_P(TriageJobTest, FlagsTheJobOnlyWhereTheDetectorCouldHold) {
  const JobCase& c = GetParam();
  const auto roster = Roster("j", c.roster_ps, 4);
  std::string query = c.query, resource;
  if (auto slash = query.find('/'); slash != std::string::npos) {
    resource = query.substr(slash + 1);
    query.resize(slash);
  }
  const Suspects s =
      Judge({{query, JobValues("j", c.role, c.values, resource)}}, roster);
  EXPECT_EQ(Flagged(s, "j"), c.flagged) << c.name;
  if (c.flagged) {
    EXPECT_EQ(s.flagged_by.size(), 1u) << c.name;
  }
}

// Thresholds (docs/diagnosis.md): hot PS holds at share >= enter - 0.1 for
// 2-4 PS and >= 1.5/n from 5 PS; the triage keeps 80% of the way from the
// fair share. Stragglers hold below 0.65 x the others' median (triage:
// 0.72); causes from 5 ranks on hold at 1.5 x the others' median (triage:
// 1.4) above their floor (triage: 80% of it).
INSTANTIATE_TEST_SUITE_P(
    Cases, TriageJobTest,
    ::testing::Values(
        JobCase{"balanced_4_ps",
                "ps_traffic",
                "ps",
                {1e6, 1e6, 1e6, 1e6},
                4,
                false},
        JobCase{"skewed_4_ps",
                "ps_traffic",
                "ps",
                {2e6, 1e6, 1e6, 1e6},
                4,
                true},  // 0.4 >= 0.37
        JobCase{"mild_4_ps",
                "ps_traffic",
                "ps",
                {1.4e6, 1e6, 1e6, 1e6},
                4,
                false},  // 0.32
        JobCase{"skewed_but_idle",
                "ps_traffic",
                "ps",
                {2e4, 1e4, 1e4, 1e4},
                4,
                false},
        JobCase{"one_of_two_ps_seen", "ps_traffic", "ps", {1e6}, 2, true},
        JobCase{"one_ps_job", "ps_traffic", "ps", {1e6}, 1, false},
        JobCase{"straggler",
                "worker_traffic",
                "worker",
                {1e6, 1e6, 1e6, 0.6e6},
                1,
                true},
        JobCase{"slightly_slow_worker",
                "worker_traffic",
                "worker",
                {1e6, 1e6, 1e6, 0.8e6},
                1,
                false},
        JobCase{"idle_workers",
                "worker_traffic",
                "worker",
                {1e4, 1e4, 1e4, 1e3},
                1,
                false},
        JobCase{
            "busy_ps_idle_others", "ps_cpu", "ps", {0.5, 0.01, 0.02}, 3, true},
        JobCase{"all_ps_busy", "ps_cpu", "ps", {0.5, 0.2, 0.3}, 3, false},
        JobCase{
            "ps_near_cpu_limit", "cpu_limit_use", "ps", {0.7, 0.3}, 2, true},
        JobCase{
            "io_stalled_worker", "pressure/io", "worker", {0.0, 0.09}, 1, true},
        JobCase{
            "little_io_stall", "pressure/io", "worker", {0.0, 0.05}, 1, false}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(TriageTest, HotPsOfManyNeedsTheRobustShare) {
  const auto roster = Roster("j", 20, 4);
  std::vector<double> ps(20, 1e5);
  ps[0] = 1e5 * 19 * 0.071 / 0.929;  // share 0.071 >= 0.05 + 0.8 x 0.025
  EXPECT_TRUE(
      Flagged(Judge({{"ps_traffic", JobValues("j", "ps", ps)}}, roster), "j"));
  ps[0] = 1e5 * 19 * 0.065 / 0.935;  // 0.065: within the spread
  EXPECT_FALSE(
      Flagged(Judge({{"ps_traffic", JobValues("j", "ps", ps)}}, roster), "j"));
}

TEST(TriageTest, ACauseFlagsOnlyWhenItStandsOutOfALargeJob) {
  const auto roster = Roster("j", 1, 10);
  std::vector<double> busy(10, 0.75);  // every worker near its CPU limit
  busy[3] = 0.95;                      // 1.27 x the others: not standing out
  EXPECT_FALSE(Flagged(
      Judge({{"cpu_limit_use", JobValues("j", "worker", busy)}}, roster), "j"));
  std::vector<double> one(10, 0.4);
  one[3] = 0.9;  // 2.25 x the others, above the floor
  EXPECT_TRUE(Flagged(
      Judge({{"cpu_limit_use", JobValues("j", "worker", one)}}, roster), "j"));
  // Fewer than 5 ranks: the floor alone decides (the ratio rule compares
  // with few peers, so the triage does not try).
  EXPECT_TRUE(Flagged(
      Judge({{"pressure", JobValues("j", "worker", {0.09, 0.09, 0.09}, "cpu")}},
            Roster("j", 1, 3)),
      "j"));
  EXPECT_FALSE(Flagged(
      Judge({{"pressure", JobValues("j", "worker", {0.05, 0.05, 0.05}, "cpu")}},
            Roster("j", 1, 3)),
      "j"));
}

TEST(TriageTest, NodeViewVerdictsFlagJobsPodsAndNodes) {
  json verdicts = json::array({Series(Pod("j", "j-worker-0"), 1),
                               Series(Pod("", "web-1"), 1),
                               Series({{"node", "node-c"}}, 1)});
  const Suspects s = Judge({{"verdicts", verdicts}}, Roster("j", 1, 2));
  EXPECT_TRUE(Flagged(s, "j"));
  EXPECT_EQ(s.pods.count({"ml", "web-1"}), 1u);
  EXPECT_EQ(s.nodes.count("node-c"), 1u);
  EXPECT_EQ(s.flagged_by.at("node_view"), 3u);
}

// training_stalled where every rank waits: no node view holding part of the
// job names it, but its workers' step rates stopped.
TEST(TriageTest, AWorkerThatStoppedSteppingFlagsItsJob) {
  const json stopped = json::array({Series(Pod("j", "j-worker-1"), 4.2)});
  const Suspects s = Judge({{"stopped_steps", stopped}}, Roster("j", 1, 2));
  EXPECT_TRUE(Flagged(s, "j"));
  EXPECT_EQ(s.flagged_by.at("stopped"), 1u);
  EXPECT_FALSE(Flagged(
      Judge({{"stopped_steps", json::array()}}, Roster("j", 1, 2)), "j"));
}

TEST(TriageTest, NodeLinksFlagAboveTheLoosenedExitRatio) {
  json links = json::array(
      {Series({{"node", "node-a"}}, 0.6), Series({{"node", "node-b"}}, 0.5)});
  const Suspects s = Judge({{"node_link", links}}, {});
  EXPECT_EQ(s.nodes, (std::set<std::string>{"node-a"}));  // 0.6 >= 0.56
}

TEST(TriageTest, RecordsEveryPsJobsTrafficForTheReport) {
  const Suspects s = Judge({{"ps_traffic", JobValues("j", "ps", {3e6, 1e6})}},
                           Roster("j", 2, 2));
  ASSERT_EQ(s.traffic.size(), 1u);
  const auto& t = s.traffic[0];
  EXPECT_EQ(t.training_job, "j");
  EXPECT_EQ(t.perspective, "workers");
  ASSERT_EQ(t.ps_traffic.size(), 2u);
  EXPECT_EQ(t.ps_traffic[0].pod, "j-ps-0");
  EXPECT_DOUBLE_EQ(t.ps_traffic[0].share, 0.75);
  EXPECT_DOUBLE_EQ(t.total_bytes_per_second, 4e6);
  EXPECT_EQ(t.ps, (std::vector<std::string>{"j-ps-0", "j-ps-1"}));
}

TEST(TriageTest, AnswerOfTheWrongShapeIsAnErrorNamingTheQuery) {
  Suspects s;
  const Status status = JudgeTriage({{"ps_traffic", json::object()}}, {},
                                    diagnosis::DiagnosisSettings{}, &s);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(status.message().find("ps_traffic"), std::string::npos);
  const Status no_labels =
      JudgeTriage({{"verdicts", json::array({json{{"value", 1}}})}}, {},
                  diagnosis::DiagnosisSettings{}, &s);
  EXPECT_FALSE(no_labels.ok());
}

TEST(TriageTest, ReplaysWholeJobsAndEverythingOnAFlaggedNode) {
  std::vector<PodRef> roster = Roster("a", 1, 2, "node-a");
  for (const auto& p : Roster("b", 1, 2, "node-b")) roster.push_back(p);
  for (const auto& p : Roster("c", 1, 1, "node-c")) roster.push_back(p);
  roster.push_back({"ml", "c-worker-9", "c", "worker", "node-b"});
  roster.push_back({"ml", "web-1", "", "", "node-b"});
  roster.push_back({"ml", "web-2", "", "", "node-a"});
  roster.push_back({"ml", "web-3", "", "", "node-c"});
  Suspects s;
  s.jobs.insert({"ml", "a"});
  s.nodes.insert("node-b");
  s.pods.insert({"ml", "web-3"});
  const Replay replay = PodsToReplay(roster, s);
  std::set<std::string> whole, alone;
  for (const auto& p : replay.whole_jobs) whole.insert(p.pod);
  for (const auto& p : replay.pods_on_flagged_nodes) alone.insert(p.pod);
  // Job a whole (flagged), web-1 (no job, on node-b), web-3 (flagged);
  // b's pods and c-worker-9 alone (on node-b, their jobs not flagged);
  // neither web-2 nor c's pods on node-c.
  EXPECT_EQ(whole, (std::set<std::string>{"a-ps-0", "a-worker-0", "a-worker-1",
                                          "web-1", "web-3"}));
  EXPECT_EQ(alone, (std::set<std::string>{"b-ps-0", "b-worker-0", "b-worker-1",
                                          "c-worker-9"}));
}

TEST(TriageTest, PodsWithoutTheirJobsAreBatchedByName) {
  std::vector<PodRef> pods;
  for (int i = 0; i < 5; ++i) {
    pods.push_back({"ml", "p" + std::to_string(i), "j", "worker", "n"});
  }
  pods.push_back({"web", "w.1", "", "", "n"});
  // 2 x 16 series per pod: 3 pods per batch of 100 series.
  const auto batches = PlanPodBatches(pods, 100, "cluster=\"a\"");
  ASSERT_EQ(batches.size(), 2u);
  for (const auto& b : batches) EXPECT_TRUE(b.pods_without_jobs);
  EXPECT_EQ(batches[0].matcher_sets,
            (std::vector<std::string>{
                "cluster=\"a\",namespace=\"ml\",pod=~\"p0|p1|p2\""}));
  EXPECT_EQ(batches[1].matcher_sets,
            (std::vector<std::string>{
                "cluster=\"a\",namespace=\"ml\",pod=~\"p3|p4\"",
                "cluster=\"a\",namespace=\"web\",pod=~\"w\\\\.1\""}));
}

TEST(TriageTest, ModesParseAndName) {
  TriageMode mode = TriageMode::kOff;
  for (const char* name : {"auto", "on", "off"}) {
    ASSERT_TRUE(ParseTriageMode(name, &mode));
    EXPECT_STREQ(TriageModeName(mode), name);
  }
  EXPECT_FALSE(ParseTriageMode("yes", &mode));
}

TEST(TriageTest, QueriesCarryTheReportsMatchers) {
  for (const auto& q :
       TriageQueries("namespace=\"ml\"", "cluster=\"a\"", 600)) {
    if (q.name == "node_link") {
      EXPECT_NE(q.promql.find("cluster=\"a\""), std::string::npos);
    } else {
      EXPECT_NE(q.promql.find("namespace=\"ml\""), std::string::npos) << q.name;
    }
  }
  for (const auto& q : TriageFallbackQueries("namespace=\"ml\"")) {
    EXPECT_NE(q.promql.find("peer_role=\"ps\""), std::string::npos);
  }
}

}  // namespace
}  // namespace trainscope::cli
