// The cluster report's lost time (cli/report_lost_time.h): canned
// Prometheus answers through the real HTTP path, the JSON and the text.
#include "cli/report_lost_time.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <mutex>

#include "cli_test_server.h"
#include "report/lost_time_text.h"

namespace trainscope::cli {
namespace {

using ::testing::HasSubstr;
using testing::ScriptedHttpServer;

// What Prometheus answers to the two queries, max by job already taken:
// training/ctr stalled 10 min and throttled 5 min of its hour, training/lm
// lost nothing (a "0" cause), batch/etl restarted all its 30 min.
constexpr const char* kLostAnswer = R"({"status":"success","data":{
  "resultType":"vector","result":[
  {"metric":{"namespace":"training","training_job":"ctr",
             "cause":"training_stalled"},"value":[1700000000,"600"]},
  {"metric":{"namespace":"training","training_job":"ctr",
             "cause":"cpu_throttled"},"value":[1700000000,"300"]},
  {"metric":{"namespace":"training","training_job":"lm",
             "cause":"pod_restarting"},"value":[1700000000,"0"]},
  {"metric":{"namespace":"batch","training_job":"etl",
             "cause":"pod_restarting"},"value":[1700000000,"1800"]}]}})";
constexpr const char* kSecondsAnswer = R"({"status":"success","data":{
  "resultType":"vector","result":[
  {"metric":{"namespace":"training","training_job":"ctr","state":"progress"},
   "value":[1700000000,"3000"]},
  {"metric":{"namespace":"training","training_job":"ctr","state":"stalled"},
   "value":[1700000000,"600"]},
  {"metric":{"namespace":"training","training_job":"lm","state":"progress"},
   "value":[1700000000,"7200"]},
  {"metric":{"namespace":"batch","training_job":"etl","state":"restarting"},
   "value":[1700000000,"1800"]}]}})";

struct FakePrometheus {
  std::mutex mu;
  std::vector<std::string> requests;
  ScriptedHttpServer server{[this](int fd, const std::string& request) {
    {
      std::lock_guard lock(mu);
      requests.push_back(request.substr(0, request.find('\r')));
    }
    const bool lost =
        request.find("trainscope_job_lost_seconds_total") != std::string::npos;
    server.Send(
        fd, testing::HttpResponse(200, lost ? kLostAnswer : kSecondsAnswer));
  }};
};

LostTime Query(FakePrometheus& prom, Status* status) {
  HttpTarget target;
  EXPECT_TRUE(ParseHttpUrl(prom.server.url(), &target).ok());
  LostTime lost;
  *status = QueryLostTime(target, FilterMatchers("", "", ""), 3600, 1700000000,
                          &lost);
  return lost;
}

TEST(ReportLostTime, SumsCausesOverJobsAndRanksJobsByGoodput) {
  FakePrometheus prom;
  Status status = Status::Ok();
  const LostTime lost = Query(prom, &status);
  ASSERT_TRUE(status.ok()) << status.message();

  const nlohmann::json j = LostTimeJson(lost);
  EXPECT_DOUBLE_EQ(j["total_seconds"].get<double>(), 2700);
  EXPECT_EQ(j["by_cause"], (nlohmann::json{{"cpu_throttled", 300.0},
                                           {"pod_restarting", 1800.0},
                                           {"training_stalled", 600.0}}));
  ASSERT_EQ(j["jobs"].size(), 3u);
  EXPECT_EQ(j["jobs"][0]["training_job"], "etl");  // lowest goodput first
  EXPECT_DOUBLE_EQ(j["jobs"][0]["goodput_ratio"].get<double>(), 0);
  EXPECT_EQ(j["jobs"][1]["training_job"], "ctr");
  EXPECT_DOUBLE_EQ(j["jobs"][1]["goodput_ratio"].get<double>(), 0.75);
  EXPECT_EQ(
      j["jobs"][1]["lost_seconds"],
      (nlohmann::json{{"cpu_throttled", 300.0}, {"training_stalled", 600.0}}));
  EXPECT_EQ(j["jobs"][2]["training_job"], "lm");
  EXPECT_DOUBLE_EQ(j["jobs"][2]["goodput_ratio"].get<double>(), 1);
  EXPECT_TRUE(j["jobs"][2]["lost_seconds"].empty());

  // Max over the nodes that each count the job, over the report's range.
  std::lock_guard lock(prom.mu);
  ASSERT_EQ(prom.requests.size(), 2u);
  for (const auto& r : prom.requests) {
    EXPECT_THAT(r, HasSubstr("/api/v1/query?"));
    EXPECT_THAT(r, HasSubstr("max"));
    EXPECT_THAT(r, HasSubstr("3600s"));
    EXPECT_THAT(r, HasSubstr("time=1700000000"));
  }
}

TEST(ReportLostTime, TextLineLargestCauseFirst) {
  FakePrometheus prom;
  Status status = Status::Ok();
  const LostTime lost = Query(prom, &status);
  ASSERT_TRUE(status.ok()) << status.message();
  const std::string text = LostTimeText({{"lost_time", LostTimeJson(lost)}});
  EXPECT_THAT(text,
              HasSubstr("This range: 45.0 min lost, 30.0 min pod_restarting, "
                        "10.0 min training_stalled, 5.0 min cpu_throttled.\n"));
  EXPECT_THAT(text, HasSubstr("  batch/etl: goodput 0%, lost 30.0 min "
                              "(pod_restarting 30.0 min)\n"));
  EXPECT_THAT(text, HasSubstr("  training/ctr: goodput 75%, lost 15.0 min "
                              "(training_stalled 10.0 min, cpu_throttled "
                              "5.0 min)\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("training/lm")));
  EXPECT_EQ(LostTimeText({{"node", "a"}}), "");  // a node view: no section
}

TEST(ReportLostTime, UnitsFit) {
  EXPECT_EQ(DurationText(42), "42 s");
  EXPECT_EQ(DurationText(750), "12.5 min");
  EXPECT_EQ(DurationText(14.2 * 3600), "14.2 h");
}

TEST(ReportLostTime, MalformedAnswersAreErrorsNotCrashes) {
  LostTime lost;
  for (const char* bad :
       {R"({"job_lost": {"x": 1}})", R"({"job_lost": [42]})",
        R"({"job_seconds": [{"metric": {}, "value": [1, 2]}]})",
        R"({"job_seconds": [{"metric": "x", "value": [1, "2"]}]})"}) {
    std::map<std::string, nlohmann::json> answers;
    const nlohmann::json parsed = nlohmann::json::parse(bad);
    for (const auto& [k, v] : parsed.items()) answers[k] = v;
    EXPECT_FALSE(LostTimeFromAnswers(answers, &lost).ok()) << bad;
  }
  // Saved reports with mistyped fields still print.
  EXPECT_NO_THROW(LostTimeText(nlohmann::json::parse(
      R"({"lost_time": {"by_cause": [1], "jobs": [1, {"lost_seconds": 3},
          {"lost_seconds": {"x": "y", "z": 5}, "goodput_ratio": "a"}]}})")));
}

}  // namespace
}  // namespace trainscope::cli
