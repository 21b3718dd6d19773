// gpu_error in the cluster view: the agent's per-pod Xid series, read back
// from Prometheus matrices, name the same GPU and Xid the node view does.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "cli/report_prometheus.h"
#include "diagnosis/detectors.h"
#include "trainscope/metric_names.h"

namespace trainscope {
namespace {

nlohmann::json Series(nlohmann::json metric, const std::string& before,
                      const std::string& after) {
  return {{"metric", std::move(metric)},
          {"values", nlohmann::json::array(
                         {{100, before}, {105, before}, {110, after}})}};
}

TEST(PrometheusWindowTest, ReadsEachGpusXidSeriesBack) {
  auto on_gpu = [](const char* container, const char* gpu) {
    return nlohmann::json{{"namespace", "training"},
                          {"pod", "vis-worker-0"},
                          {"training_job", "vis"},
                          {"role", "worker"},
                          {"container", container},
                          {"gpu", gpu},
                          {"UUID", std::string("GPU-") + gpu}};
  };
  const std::map<std::string, nlohmann::json> results = {
      // Two containers on GPU 0 carry the same device counter; GPU 1 had
      // its Xids before the range; a series without an NVML index is
      // ignored.
      {"gpu_xid", nlohmann::json::array({Series(on_gpu("a", "0"), "0", "1"),
                                         Series(on_gpu("b", "0"), "0", "1"),
                                         Series(on_gpu("a", "1"), "3", "3"),
                                         Series(on_gpu("a", ""), "0", "9")})},
      {"gpu_last_xid",
       nlohmann::json::array({Series(on_gpu("a", "0"), "0", "79"),
                              Series(on_gpu("b", "0"), "0", "79"),
                              Series(on_gpu("a", "1"), "13", "13")})},
  };
  diagnosis::Window w;
  ASSERT_TRUE(cli::WindowFromMatrices(results, &w).ok());
  const auto& points = w.pods.at("training/vis-worker-0").points;
  ASSERT_EQ(points.size(), 3u);
  ASSERT_EQ(points.back().gpu_xids.size(), 2u);
  EXPECT_EQ(points.back().gpu_xids.at(0).errors, 1);
  EXPECT_EQ(points.back().gpu_xids.at(0).last_xid, 79);
  EXPECT_EQ(points.back().gpu_xids.at(0).uuid, "GPU-0");

  const auto stats = diagnosis::ComputeStats(w);
  std::vector<diagnosis::JobTraffic> jobs;
  std::vector<diagnosis::Finding> out;
  diagnosis::DetectGpuError({stats, stats, jobs, jobs}, {}, out);
  ASSERT_EQ(out.size(), 1u);
  const auto& d = out[0].diagnosis;
  EXPECT_EQ(d.severity, diagnosis::Severity::kCritical);
  EXPECT_EQ(d.evidence["xid"], 79);
  EXPECT_EQ(d.evidence["UUID"], "GPU-0");
  EXPECT_EQ(d.evidence["gpus"].size(), 1u);
}

TEST(PrometheusQueriesTest, AskForThePodXidSeries) {
  std::string all;
  for (const auto& q : cli::ClusterQueries("training", "", "")) {
    all += q.promql + "\n";
  }
  EXPECT_THAT(all, ::testing::HasSubstr(std::string(kPodGpuXidErrorsTotal)));
  EXPECT_THAT(all, ::testing::HasSubstr(std::string(kPodGpuLastXid)));
}

}  // namespace
}  // namespace trainscope
