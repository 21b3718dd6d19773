// The report JSON fields the page draws (additions to DESIGN.md's jobs[]),
// from the diagnosis' JobTraffic as the agent and the cluster view have it.
#include <gtest/gtest.h>

#include "exporter/headroom_families.h"
#include "report/report_json.h"
#include "report_page/page.h"

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

// The scaling forecast: in the report, on the page and as metrics, the
// same numbers.
TEST(ReportFieldsTest, HeadroomInReportPageAndMetrics) {
  diagnosis::JobHeadroom h{"training", "ctr"};
  diagnosis::ResourceLoad link{diagnosis::kPsLink,
                               "ctr-ps-0",
                               "node-a",
                               "transmit",
                               2.15e6,
                               5e6,
                               2.15e6};
  link.load_factor = 5e6 / 2.15e6;
  link.workers = 4;
  diagnosis::ResourceLoad cpu{
      diagnosis::kPsCpu, "ctr-ps-0", "node-a", "", 0.2, 1, 0.2};
  cpu.load_factor = 5;
  cpu.workers = 4;
  h.resources = {link, cpu};
  h.workers = 4;
  h.max_workers = 4 * link.load_factor;
  h.steps_per_second = 13.6;
  h.max_steps_per_second = 13.6 * link.load_factor;

  nlohmann::json report = ReportView("node-a", {}, nlohmann::json::array(), {});
  SetJobHeadroom(report, {h});
  ASSERT_EQ(report["jobs"].size(), 1u);
  const auto& j = report["jobs"][0]["headroom"];
  EXPECT_EQ(j["workers"], 4);
  EXPECT_NEAR(j["max_workers"].get<double>(), 9.302, 1e-3);
  EXPECT_NEAR(j["max_steps_per_second"].get<double>(), 31.63, 1e-2);
  EXPECT_EQ(j["bottleneck"]["resource"], "ps_link");
  EXPECT_EQ(j["bottleneck"]["direction"], "transmit");
  EXPECT_NEAR(j["bottleneck"]["utilization_ratio"].get<double>(), 0.43, 1e-9);
  EXPECT_EQ(j["resources"].size(), 2u);

  const std::string page = page::RenderReportPage(report, {});
  EXPECT_NE(page.find("scales to about 9 workers (now 4): ctr-ps-0&#39;s "
                      "transmit link is 43% full"),
            std::string::npos)
      << page;

  std::vector<prometheus::MetricFamily> families;
  AppendHeadroomFamilies({h}, families);
  ASSERT_EQ(families.size(), 3u);
  EXPECT_EQ(families[0].name, "trainscope_job_headroom_ratio");
  ASSERT_EQ(families[0].metric.size(), 2u);
  EXPECT_EQ(families[1].name, "trainscope_job_forecast_max_workers");
  EXPECT_NEAR(families[1].metric[0].gauge.value, 9.302, 1e-3);
  EXPECT_EQ(families[2].name, "trainscope_job_forecast_max_steps_per_second");
}

}  // namespace
}  // namespace trainscope
