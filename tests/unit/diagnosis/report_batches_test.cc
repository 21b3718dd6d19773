// The cluster view's batches: whole jobs, bounded pods, every pod once.
#include "cli/report_batches.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/report_prometheus.h"

namespace trainscope::cli {
namespace {

using ::testing::ElementsAre;

// A job of pods with no role (16 estimated series each).
std::vector<PodRef> Job(const std::string& ns, const std::string& job,
                        int pods) {
  std::vector<PodRef> out;
  for (int i = 0; i < pods; ++i) {
    out.push_back({ns, job + "-" + std::to_string(i), job, ""});
  }
  return out;
}

// The bound for `pods` pods of 16 series.
constexpr size_t Pods(size_t pods) { return pods * kSeriesPerPod; }

std::vector<PodRef> Loose(const std::string& ns, int pods) {
  std::vector<PodRef> out;
  for (int i = 0; i < pods; ++i) {
    out.push_back({ns, "svc-" + std::to_string(i), "", ""});
  }
  return out;
}

std::vector<PodRef> Concat(std::initializer_list<std::vector<PodRef>> parts) {
  std::vector<PodRef> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

TEST(PlanBatchesTest, SmallClusterIsOneBatchWithoutMatchers) {
  const auto batches =
      PlanBatches(Concat({Job("a", "j", 3), Loose("a", 2)}), Pods(10), "");
  ASSERT_EQ(batches.size(), 1u);
  EXPECT_THAT(batches[0].matcher_sets, ElementsAre(""));
  EXPECT_EQ(batches[0].pods, 5u);
  // The namespace / job filter stays the only matcher.
  EXPECT_THAT(PlanBatches(Job("a", "j", 3), Pods(10), "namespace=\"a\"")[0]
                  .matcher_sets,
              ElementsAre("namespace=\"a\""));
}

TEST(PlanBatchesTest, JobsAreNeverSplitAndBatchesAreBounded) {
  const auto batches =
      PlanBatches(Concat({Job("a", "big", 7), Job("a", "j1", 3),
                          Job("a", "j2", 3), Job("b", "j3", 2)}),
                  Pods(5), "");
  ASSERT_EQ(batches.size(), 3u);
  // "big" (7) alone exceeds the bound: a batch of its own.
  EXPECT_THAT(batches[0].matcher_sets,
              ElementsAre("namespace=\"a\",training_job=\"big\""));
  EXPECT_EQ(batches[0].pods, 7u);
  EXPECT_THAT(batches[1].matcher_sets,
              ElementsAre("namespace=\"a\",training_job=\"j1\""));
  EXPECT_THAT(batches[2].matcher_sets,
              ElementsAre("namespace=\"a\",training_job=\"j2\"",
                          "namespace=\"b\",training_job=\"j3\""));
}

TEST(PlanBatchesTest, LoosePodsByNamespaceThenByName) {
  const auto batches =
      PlanBatches(Concat({Loose("s1", 2), Loose("s2", 2), Loose("s3", 5)}),
                  Pods(4), "cluster=\"x\"");
  ASSERT_EQ(batches.size(), 3u);
  // Whole namespaces share one matcher.
  EXPECT_THAT(
      batches[0].matcher_sets,
      ElementsAre("cluster=\"x\",namespace=~\"s1|s2\",training_job=\"\""));
  // A namespace split over batches is named pod by pod.
  EXPECT_THAT(batches[1].matcher_sets,
              ElementsAre("cluster=\"x\",namespace=\"s3\",training_job=\"\","
                          "pod=~\"svc-0|svc-1|svc-2|svc-3\""));
  EXPECT_THAT(batches[2].matcher_sets,
              ElementsAre("cluster=\"x\",namespace=\"s3\",training_job=\"\","
                          "pod=~\"svc-4\""));
}

// Peer pairs, not pods, make a PS job heavy: 10 workers x 2 PS are 12 pods
// but 20 pairs (80 peer series) on top of their 192 pod series.
TEST(PlanBatchesTest, PsJobsWeighTheirWorkerPsPairs) {
  EXPECT_EQ(EstimatedJobSeries(12, 10, 2), 12 * 16 + 20 * 4u);
  EXPECT_EQ(EstimatedJobSeries(4, 4, 0), 4 * 16 + 8 * 4u);  // allreduce ring
  std::vector<PodRef> pods;
  for (const char* job : {"j1", "j2"}) {
    for (int i = 0; i < 10; ++i) {
      pods.push_back({"a", std::string(job) + "-worker-" + std::to_string(i),
                      job, "worker"});
    }
    for (int i = 0; i < 2; ++i) {
      pods.push_back(
          {"a", std::string(job) + "-ps-" + std::to_string(i), job, "ps"});
    }
  }
  // 24 pods would fit a 30-pod bound; their 544 series do not fit 400.
  const auto batches = PlanBatches(pods, 400, "");
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].estimated_series, 272u);
  EXPECT_EQ(PlanBatches(pods, 600, "").size(), 1u);
}

TEST(PlanBatchesTest, EveryPodInExactlyOneBatchOnce) {
  auto pods = Concat({Job("a", "j", 4), Job("a", "j", 4), Loose("a", 9)});
  size_t total = 0;
  for (const auto& b : PlanBatches(pods, Pods(3), "")) total += b.pods;
  EXPECT_EQ(total, 13u);  // the duplicated job's pods counted once
}

TEST(PlanBatchesTest, RegexMetacharactersInNamesAreEscaped) {
  EXPECT_EQ(ExactAlternatives({"a.b", "c+d", "e"}), "a\\.b|c\\+d|e");
  const auto batches =
      PlanBatches(Concat({Job("a", "v1.2", 2), Job("a", "x", 2)}), Pods(3), "");
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_THAT(batches[0].matcher_sets,
              ElementsAre("namespace=\"a\",training_job=\"v1.2\""));
}

TEST(PodRosterTest, ParsesTheVectorAndRefusesGarbage) {
  std::vector<PodRef> pods;
  auto answer = nlohmann::json::parse(R"([
    {"metric": {"namespace": "a", "pod": "p", "training_job": "j", "role": "ps"}, "value": [1, "1"]},
    {"metric": {"namespace": "a", "pod": "q"}, "value": [1, "1"]},
    {"metric": {"namespace": "a"}, "value": [1, "1"]}])");
  ASSERT_TRUE(PodRefsFromVector(answer, &pods).ok());
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(pods[0].training_job, "j");
  EXPECT_EQ(pods[0].role, "ps");
  EXPECT_EQ(pods[1].training_job, "");
  EXPECT_FALSE(PodRefsFromVector(nlohmann::json("nope"), &pods).ok());
  EXPECT_FALSE(
      PodRefsFromVector(nlohmann::json::parse(R"([{"value": 1}])"), &pods)
          .ok());
  EXPECT_EQ(PodRosterQuery("namespace=\"a\"", 600),
            "group by (namespace, pod, training_job, role, node) "
            "(max_over_time(trainscope_pod_info{namespace=\"a\"}[600s]))");
}

TEST(ClusterQueriesTest, OneQueryPerMatcherListNoOr) {
  const auto queries = ClusterQueries(std::vector<std::string>{
      "namespace=\"a\",training_job=\"j\"", "namespace=\"b\""});
  size_t cpu = 0, node = 0;
  for (const auto& q : queries) {
    if (q.name == "node_cpus") {
      ++node;  // the deprecated name `or` the new one: two small selectors
      continue;
    }
    EXPECT_EQ(q.promql.find(" or "), std::string::npos) << q.promql;
    if (q.name == "cpu") ++cpu;
  }
  EXPECT_EQ(cpu, 2u);
  EXPECT_EQ(node, 1u);  // node series: once, unfiltered
}

}  // namespace
}  // namespace trainscope::cli
