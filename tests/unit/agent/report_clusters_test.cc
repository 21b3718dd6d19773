// The reports of several clusters merged into one (report_clusters.h), and
// how the table and the page name the cluster.
#include "cli/report_clusters.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/report_selector.h"
#include "report/report_json.h"
#include "report_page/model.h"

namespace trainscope::cli {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

json OneClusterReport(const std::string& pod, double lost_stalled,
                      int evaluations) {
  return {{"generated_at", "2026-11-29T00:00:00Z"},
          {"node", "cluster"},
          {"diagnoses", json::array({{{"kind", "hot_parameter_server"},
                                      {"severity", "warning"},
                                      {"namespace", "training"},
                                      {"training_job", "ctr"},
                                      {"pod", pod}}})},
          {"jobs", json::array({{{"namespace", "training"},
                                 {"training_job", "ctr"},
                                 {"ps", json::array({pod})},
                                 {"workers", json::array()},
                                 {"ps_traffic_share", {{pod, 0.8}}}}})},
          {"missing_nodes", json::array()},
          {"lost_time",
           {{"total_seconds", lost_stalled},
            {"by_cause", {{"stalled", lost_stalled}}},
            {"jobs",
             json::array({{{"namespace", "training"},
                           {"training_job", "ctr"},
                           {"goodput_ratio", 0.5},
                           {"lost_seconds", {{"stalled", lost_stalled}}}}})}}},
          {"source",
           {{"prometheus", "http://thanos:9090"},
            {"evaluations", evaluations},
            {"batches", 1},
            {"triage", {{"used", false}}}}}};
}

TEST(ReportClustersTest, EveryItemNamesItsClusterAndLostTimeAddsUp) {
  json merged = MergeClusterReports(
      "cluster", {{"a", OneClusterReport("ctr-ps-0", 30, 5)},
                  {"b", OneClusterReport("ctr-ps-1", 12, 7)}});
  ASSERT_EQ(merged["diagnoses"].size(), 2u);
  EXPECT_EQ(merged["diagnoses"][0]["cluster"], "a");
  EXPECT_EQ(merged["diagnoses"][1]["cluster"], "b");
  EXPECT_EQ(merged["diagnoses"][1]["pod"], "ctr-ps-1");
  ASSERT_EQ(merged["jobs"].size(), 2u);
  EXPECT_EQ(merged["jobs"][1]["cluster"], "b");
  EXPECT_DOUBLE_EQ(merged["lost_time"]["total_seconds"].get<double>(), 42);
  EXPECT_DOUBLE_EQ(merged["lost_time"]["by_cause"]["stalled"].get<double>(),
                   42);
  ASSERT_EQ(merged["lost_time"]["jobs"].size(), 2u);
  EXPECT_EQ(merged["lost_time"]["jobs"][0]["cluster"], "a");
  EXPECT_EQ(merged["source"]["evaluations"], 12);
  EXPECT_EQ(merged["source"]["batches"], 2);
  EXPECT_EQ(merged["source"]["cluster_label"], "cluster");
  ASSERT_EQ(merged["source"]["clusters"].size(), 2u);
  EXPECT_EQ(merged["source"]["clusters"][1]["cluster"], "b");
  EXPECT_EQ(merged["source"]["clusters"][1]["evaluations"], 7);

  const std::string text = ReportText(merged);
  EXPECT_THAT(text, HasSubstr("a:training/ctr-ps-0"));
  EXPECT_THAT(text, HasSubstr("b:training/ctr-ps-1"));
  EXPECT_THAT(text, HasSubstr("  b:training/ctr: 1 PS"));
  EXPECT_THAT(text, HasSubstr("  a:training/ctr: goodput 50%"));
  const page::ReportModel model = page::ModelOf(merged);
  ASSERT_EQ(model.jobs.size(), 2u);
  EXPECT_EQ(model.jobs[0].namespace_name, "a:training");
  EXPECT_EQ(model.diagnoses[1].namespace_name, "b:training");
}

// A report without clusters is untouched by the prefix.
TEST(ReportClustersTest, OneClusterHasNoPrefix) {
  const std::string text = ReportText(OneClusterReport("ctr-ps-0", 0, 1));
  EXPECT_THAT(text, HasSubstr(" training/ctr-ps-0"));
  EXPECT_EQ(text.find(":training"), std::string::npos) << text;
}

TEST(ReportClustersTest, MatchersAndLabelNames) {
  EXPECT_EQ(ClusterMatchers("", "cluster", "a"), "cluster=\"a\"");
  EXPECT_EQ(ClusterMatchers("job=\"x\"", "region", "eu\"1"),
            "job=\"x\",region=\"eu\\\"1\"");
  EXPECT_EQ(ClusterMatchers("", "cluster", ""), "cluster=\"\"");
  EXPECT_TRUE(IsLabelName("cluster"));
  EXPECT_TRUE(IsLabelName("_k8s_cluster2"));
  EXPECT_FALSE(IsLabelName(""));
  EXPECT_FALSE(IsLabelName("2cluster"));
  EXPECT_FALSE(IsLabelName("k8s-cluster"));
  EXPECT_FALSE(IsLabelName("a b"));
}

}  // namespace
}  // namespace trainscope::cli
