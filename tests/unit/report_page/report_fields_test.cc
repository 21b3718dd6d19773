// The report JSON fields the page draws (additions to DESIGN.md's jobs[]),
// from the diagnosis' JobTraffic as the agent and the cluster view have it.
#include <gtest/gtest.h>

#include "api_views.h"

namespace trainscope {
namespace {

TEST(ReportFieldsTest, RatesLinksAndNodesFromJobTraffic) {
  diagnosis::JobTraffic job;
  job.namespace_name = "training";
  job.training_job = "ctr";
  job.ps_traffic = {{"training/ctr-ps-0", "ctr-ps-0", 900.04, 0.9},
                    {"training/ctr-ps-1", "ctr-ps-1", 100, 0.1}};
  job.total_bytes_per_second = 1000;
  job.worker_exchange = {{"training/ctr-worker-0", 1000}};
  job.worker_ps_links = {
      {"training/ctr-worker-0",
       {{"training/ctr-ps-0", 900.04}, {"training/ctr-ps-1", 100}}}};
  job.perspective = "workers";

  PodInfo worker;
  worker.namespace_name = "training";
  worker.name = "ctr-worker-0";
  worker.training_job = "ctr";
  worker.role = Role::kWorker;
  worker.node = "node-a";
  nlohmann::json report =
      ReportView("node-a", {worker}, nlohmann::json::array(), {});
  SetPsTrafficShares(report, PsSharesOf({job}));
  PodInfo remote_ps;
  remote_ps.namespace_name = "training";
  remote_ps.name = "ctr-ps-1";
  remote_ps.node = "node-b";
  AddPodNodes(report, {remote_ps});

  ASSERT_EQ(report["jobs"].size(), 1u);
  const auto& j = report["jobs"][0];
  // The contract fields stay as they were.
  EXPECT_EQ(j["workers"], nlohmann::json({"ctr-worker-0"}));
  EXPECT_EQ(j["ps_traffic_share"]["ctr-ps-0"], 0.9);
  // Additions.
  EXPECT_EQ(j["ps_bytes_per_second"]["ctr-ps-0"], 900.0);
  EXPECT_EQ(j["worker_ps_bytes_per_second"]["ctr-worker-0"], 1000.0);
  EXPECT_EQ(j["links"], nlohmann::json::parse(R"([
      {"worker": "ctr-worker-0", "ps": "ctr-ps-0", "bytes_per_second": 900.0},
      {"worker": "ctr-worker-0", "ps": "ctr-ps-1", "bytes_per_second": 100.0}
  ])"));
  EXPECT_EQ(j["measured_from"], "workers");
  EXPECT_EQ(j["pod_nodes"], nlohmann::json::parse(
                                R"({"ctr-worker-0": "node-a",
                                    "ctr-ps-1": "node-b"})"));
}

}  // namespace
}  // namespace trainscope
