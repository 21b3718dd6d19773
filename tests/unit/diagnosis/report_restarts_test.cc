// The restart state travels from the API's pod status through the agent's
// series to the cluster view: what the agent exports is what the cluster
// view reads back, and both name the same pod_restarting.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/report_prometheus.h"
#include "diagnosis/detectors.h"
#include "exporter/exporter.h"
#include "exporter/pod_status_families.h"
#include "trainscope/metric_names.h"

namespace trainscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr double kFinishedAt = 1795860000;  // 2026-11-28T10:00:00Z

PodInfo RestartedWorker() {
  PodInfo pod;
  pod.uid = "u1";
  pod.namespace_name = "training";
  pod.name = "ring-worker-1";
  pod.training_job = "ring";
  pod.role = Role::kWorker;
  ContainerInfo c;
  c.name = "pytorch";
  c.restart_count = 3;
  c.waiting_reason = std::string(kCrashLoopBackOff);
  c.last_terminated = ContainerTermination{"Error", 139, 11, kFinishedAt};
  pod.containers.push_back(c);
  ContainerInfo sidecar;
  sidecar.name = "sidecar";
  sidecar.restart_count = 1;
  sidecar.running_since_s = kFinishedAt - 100;
  pod.containers.push_back(sidecar);
  return pod;
}

TEST(PodStatusFamiliesTest, ExportsRestartsExitsAndWaiting) {
  History history(4);
  auto snap = std::make_shared<Snapshot>();
  PodInfo no_status = RestartedWorker();
  no_status.uid = "u2";
  no_status.name = "scanned";
  no_status.containers = {ContainerInfo{.name = "c"}};
  snap->pods =
      std::make_shared<const PodList>(PodList{RestartedWorker(), no_status});
  history.Push(snap);
  Exporter exporter(history, "node-a", {AppendPodStatusFamilies}, SelfStats{});
  const std::string text = exporter.Render();
  EXPECT_THAT(text, HasSubstr("trainscope_pod_restarts_total{"));
  EXPECT_THAT(text, HasSubstr("pod=\"ring-worker-1\""));
  EXPECT_THAT(text, HasSubstr("container=\"pytorch\""));
  EXPECT_THAT(text, HasSubstr("reason=\"CrashLoopBackOff\""));
  EXPECT_THAT(text, HasSubstr("exit_code=\"139\""));
  EXPECT_THAT(text, HasSubstr("signal=\"11\""));
  EXPECT_THAT(text, HasSubstr("1795860000"));
  // A pod whose source has no status gets no restart series (not 0).
  EXPECT_THAT(text, Not(HasSubstr("pod=\"scanned\"")));
}

nlohmann::json Series(nlohmann::json metric, double t, const std::string& v) {
  return {{"metric", std::move(metric)},
          {"values", nlohmann::json::array({{t - 5, v}, {t, v}})}};
}

TEST(PodStatusFamiliesTest, TheClusterViewReadsThemBack) {
  const nlohmann::json pod = {{"namespace", "training"},
                              {"pod", "ring-worker-1"},
                              {"training_job", "ring"},
                              {"role", "worker"}};
  auto with = [&pod](nlohmann::json extra) {
    nlohmann::json m = pod;
    m.update(extra);
    return m;
  };
  const double now = kFinishedAt + 30;
  const std::map<std::string, nlohmann::json> results = {
      {"info",
       nlohmann::json::array({Series(with({{"uid", "u1"}}), now, "1")})},
      {"restarts", nlohmann::json::array({Series(pod, now, "4")})},
      {"crash_looping",
       nlohmann::json::array({Series(
           with({{"container", "pytorch"}, {"reason", "CrashLoopBackOff"}}),
           now, "1")})},
      {"last_terminated",
       nlohmann::json::array({Series(with({{"container", "pytorch"},
                                           {"reason", "Error"},
                                           {"exit_code", "139"},
                                           {"signal", "11"}}),
                                     now, "1795860000"),
                              Series(with({{"container", "sidecar"},
                                           {"reason", "Completed"},
                                           {"exit_code", "0"},
                                           {"signal", "0"}}),
                                     now, "1795859000")})},
  };
  diagnosis::Window w;
  ASSERT_TRUE(cli::WindowFromMatrices(results, &w).ok());
  const auto& meta = w.pods.at("training/ring-worker-1").meta;
  ASSERT_TRUE(meta.last_termination);
  EXPECT_EQ(meta.last_terminated_container, "pytorch");
  EXPECT_EQ(meta.last_termination->exit_code, 139);
  EXPECT_EQ(meta.last_termination->signal, 11);

  const auto stats = diagnosis::ComputeStats(w);
  std::vector<diagnosis::JobTraffic> jobs;
  std::vector<diagnosis::Finding> out;
  diagnosis::DetectPodRestarting({stats, stats, jobs, jobs}, {}, out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].diagnosis.severity, diagnosis::Severity::kCritical);
  EXPECT_THAT(out[0].diagnosis.summary, HasSubstr("crash loop"));
  EXPECT_THAT(out[0].diagnosis.summary, HasSubstr("SIGSEGV"));
  EXPECT_EQ(out[0].diagnosis.evidence["down_seconds"], 30);
}

}  // namespace
}  // namespace trainscope
