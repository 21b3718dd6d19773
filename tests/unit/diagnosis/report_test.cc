// The agent-side pieces: the exporter section, the report's PS shares, and
// the cluster view's translation of Prometheus matrices into a window.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cli/report_prometheus.h"
#include "diagnosis/analysis.h"
#include "exporter/diagnosis_families.h"
#include "report/report_json.h"

namespace trainscope {
namespace {

const prometheus::MetricFamily* Find(
    const std::vector<prometheus::MetricFamily>& families,
    const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::map<std::string, std::string> Labels(const prometheus::ClientMetric& m) {
  std::map<std::string, std::string> out;
  for (const auto& l : m.label) out[l.name] = l.value;
  return out;
}

TEST(DiagnosisFamiliesTest, ActiveWhileActiveAndGoneWhenCleared) {
  Snapshot snap;
  auto pods = std::make_shared<PodList>();
  PodInfo pod;
  pod.uid = "u";
  pod.namespace_name = "training";
  pod.name = "ctr-worker-0";
  pod.annotations["kubernetes.io/egress-bandwidth"] = "10M";
  pods->push_back(pod);
  snap.pods = pods;
  ExportContext ctx(snap, "node-a");

  diagnosis::Diagnosis d;
  d.kind = "hot_parameter_server";
  d.severity = diagnosis::Severity::kWarning;
  d.namespace_name = "training";
  d.training_job = "ctr";
  d.pod = "ctr-ps-0";
  d.node = "node-b";
  std::vector<prometheus::MetricFamily> out;
  AppendDiagnosisFamilies(ctx, {d}, out);
  const auto* active = Find(out, "trainscope_diagnosis_active");
  ASSERT_NE(active, nullptr);
  EXPECT_EQ(active->type, prometheus::MetricType::Gauge);
  ASSERT_EQ(active->metric.size(), 1u);
  EXPECT_EQ(active->metric[0].gauge.value, 1.0);
  EXPECT_EQ(Labels(active->metric[0]), (std::map<std::string, std::string>{
                                           {"kind", "hot_parameter_server"},
                                           {"severity", "warning"},
                                           {"namespace", "training"},
                                           {"training_job", "ctr"},
                                           {"pod", "ctr-ps-0"},
                                           {"node", "node-b"}}));
  const auto* bw = Find(out, "trainscope_pod_bandwidth_limit_bytes_per_second");
  ASSERT_NE(bw, nullptr);
  ASSERT_EQ(bw->metric.size(), 1u);
  EXPECT_EQ(bw->metric[0].gauge.value, 1.25e6);
  EXPECT_EQ(Labels(bw->metric[0])["direction"], "transmit");

  std::vector<prometheus::MetricFamily> cleared;
  AppendDiagnosisFamilies(ctx, {}, cleared);
  EXPECT_EQ(Find(cleared, "trainscope_diagnosis_active"), nullptr);
}

TEST(ReportSharesTest, FillsKnownJobsAndAddsJobsSeenOnlyAsTraffic) {
  PodInfo w;
  w.namespace_name = "training";
  w.name = "ctr-worker-0";
  w.training_job = "ctr";
  w.role = Role::kWorker;
  auto report = ReportView("node-a", {w}, nlohmann::json::array(),
                           std::chrono::system_clock::now());
  SetPsTrafficShares(
      report, {{"training", "ctr", {{"ctr-ps-0", 0.8}, {"ctr-ps-1", 0.2}}},
               {"other", "x", {{"x-ps-0", 1.0}}}});
  ASSERT_EQ(report["jobs"].size(), 2u);
  EXPECT_EQ(report["jobs"][0]["ps_traffic_share"]["ctr-ps-0"], 0.8);
  EXPECT_EQ(report["jobs"][1]["training_job"], "x");
  EXPECT_THAT(ReportText(report), ::testing::HasSubstr("80.0%"));
}

TEST(ReportTextTest, ShowsScalarEvidenceAndRecommendations) {
  diagnosis::Diagnosis d;
  d.kind = "cpu_throttled";
  d.namespace_name = "training";
  d.pod = "ctr-worker-3";
  d.summary = "throttled";
  d.evidence = {
      {"throttled_ratio", 0.4}, {"source", "cgroup"}, {"ps", {{"a", 1}}}};
  d.recommendations = {"Raise the CPU limit"};
  auto report = ReportView("node-a", {},
                           nlohmann::json::array({diagnosis::DiagnosisJson(d)}),
                           std::chrono::system_clock::now());
  const std::string text = ReportText(report);
  EXPECT_THAT(text, ::testing::HasSubstr("training/ctr-worker-3"));
  EXPECT_THAT(text, ::testing::HasSubstr(
                        "evidence: source=cgroup, throttled_ratio=0.4\n"));
  EXPECT_THAT(text, ::testing::HasSubstr("-> Raise the CPU limit"));
}

nlohmann::json Series(nlohmann::json metric,
                      std::vector<std::pair<double, std::string>> values) {
  nlohmann::json v = nlohmann::json::array();
  for (const auto& [t, x] : values) v.push_back({t, x});
  return {{"metric", std::move(metric)}, {"values", std::move(v)}};
}

TEST(PrometheusWindowTest, RebuildsPodsPeersAndNodes) {
  nlohmann::json worker = {{"namespace", "training"},
                           {"pod", "ctr-worker-0"},
                           {"training_job", "ctr"},
                           {"role", "worker"}};
  nlohmann::json peer = worker;
  peer["peer_namespace"] = "training";
  peer["peer_pod"] = "ctr-ps-0";
  peer["peer_role"] = "ps";
  nlohmann::json unknown = worker;
  unknown["peer_pod"] = "";
  nlohmann::json info = worker;
  info["node"] = "node-a";
  info["uid"] = "u1";
  std::map<std::string, nlohmann::json> results = {
      {"cpu", nlohmann::json::array(
                  {Series(worker, {{10, "1"}, {12, "2"}, {14, "NaN"}})})},
      {"peer_rx",
       {Series(peer, {{10, "100"}, {12, "300"}}),
        Series(unknown, {{10, "5"}, {12, "9"}})}},
      {"info", nlohmann::json::array({Series(info, {{10, "1"}, {12, "1"}})})},
      {"nic_speed",
       {Series({{"node", "node-a"}, {"device", "eth0"}}, {{10, "1.25e8"}}),
        Series({{"node", "node-a"}, {"device", "eth1"}}, {{10, "1.25e9"}})}},
      {"nic_rx",
       {Series({{"node", "node-a"}, {"device", "eth0"}},
               {{10, "0"}, {12, "4"}}),
        Series({{"node", "node-a"}, {"device", "eth1"}},
               {{10, "0"}, {12, "6"}})}},
  };
  diagnosis::Window w;
  Status parsed = cli::WindowFromMatrices(results, &w);
  ASSERT_TRUE(parsed.ok()) << parsed.message();
  const auto& t = w.pods.at("training/ctr-worker-0");
  EXPECT_EQ(t.meta.node, "node-a");
  EXPECT_EQ(t.meta.role, Role::kWorker);
  ASSERT_EQ(t.points.size(), 2u);  // the NaN sample adds nothing
  EXPECT_EQ(t.points[0].instance, "u1");
  EXPECT_EQ(t.points[1].peers.at("training/ctr-ps-0").receive_bytes, 300);
  EXPECT_EQ(t.points[1].peers.size(), 1u);  // unknown peers left out
  EXPECT_EQ(w.peer_roles.at("training/ctr-ps-0"), Role::kPs);
  EXPECT_EQ(w.nodes.at("node-a").nic_speed_bytes_per_second, 1.25e9);
  auto stats = diagnosis::ComputeStats(w);
  EXPECT_NEAR(*stats.pods.at("training/ctr-worker-0").cpu_cores, 0.5, 1e-9);
  // Both NICs' bytes, over 2 s.
  EXPECT_NEAR(
      *stats.pods.at("training/ctr-worker-0").node_receive_bytes_per_second, 5,
      1e-9);
}

// The CLI adds each answer as it arrives (in query order) and drops it; the
// window must not depend on that order, and Finish() starts afresh.
TEST(PrometheusWindowTest, BuilderTakesAnswersOneAtATimeInAnyOrder) {
  nlohmann::json pod = {{"namespace", "training"},
                        {"pod", "ctr-ps-0"},
                        {"training_job", "ctr"},
                        {"role", "ps"}};
  nlohmann::json peer = pod;
  peer["peer_namespace"] = "training";
  peer["peer_pod"] = "ctr-worker-0";
  peer["peer_role"] = "worker";
  nlohmann::json info = pod;
  info["node"] = "node-b";
  info["uid"] = "u2";
  std::map<std::string, nlohmann::json> results = {
      {"cpu", nlohmann::json::array({Series(pod, {{10, "1"}, {12, "3"}})})},
      {"info", nlohmann::json::array({Series(info, {{10, "1"}, {12, "1"}})})},
      {"peer_tx", nlohmann::json::array({Series(peer, {{10, "7"}})})},
      {"nic_tx",
       nlohmann::json::array({Series({{"node", "node-b"}, {"device", "eth0"}},
                                     {{10, "0"}, {12, "8"}})})},
  };
  diagnosis::Window whole;
  ASSERT_TRUE(cli::WindowFromMatrices(results, &whole).ok());
  cli::WindowBuilder builder;
  for (auto it = results.rbegin(); it != results.rend(); ++it) {
    ASSERT_TRUE(builder.Add(it->first, it->second).ok()) << it->first;
  }
  const diagnosis::Window one_by_one = builder.Finish();
  EXPECT_EQ(one_by_one, whole);
  EXPECT_EQ(one_by_one.pods.at("training/ctr-ps-0").meta.node, "node-b");
  EXPECT_EQ(one_by_one.pods.at("training/ctr-ps-0")
                .points.at(0)
                .peers.at("training/ctr-worker-0")
                .transmit_bytes,
            7);
  EXPECT_TRUE(builder.Finish().pods.empty());
  EXPECT_FALSE(builder.Add("cpu", "nope").ok());
}

TEST(PrometheusWindowTest, GpuUseIsSummedPerGpuThenAveraged) {
  auto gpu = [](const char* container, const char* index) {
    return nlohmann::json{{"namespace", "training"},
                          {"pod", "ctr-worker-0"},
                          {"container", container},
                          {"gpu", index}};
  };
  std::map<std::string, nlohmann::json> results = {
      {"gpu", nlohmann::json::array({Series(gpu("a", "0"), {{10, "0.3"}}),
                                     Series(gpu("b", "0"), {{10, "0.2"}}),
                                     Series(gpu("a", "1"), {{10, "0.1"}})})}};
  diagnosis::Window w;
  ASSERT_TRUE(cli::WindowFromMatrices(results, &w).ok());
  const auto& p = w.pods.at("training/ctr-worker-0").points.at(0);
  EXPECT_EQ(p.gpus, 2u);
  EXPECT_NEAR(*p.gpu_utilization_ratio, 0.3, 1e-9);
}

TEST(PrometheusWindowTest, MalformedAnswersAreErrorsNamingTheQuery) {
  diagnosis::Window w;
  auto bad = cli::WindowFromMatrices(
      {{"cpu", nlohmann::json::array(
                   {{{"metric", nlohmann::json::object()}, {"values", "x"}}})}},
      &w);
  EXPECT_FALSE(bad.ok());
  EXPECT_THAT(bad.message(), ::testing::HasSubstr("cpu"));
  auto sample = cli::WindowFromMatrices(
      {{"cpu",
        nlohmann::json::array({Series(nlohmann::json{{"pod", "p"}}, {})})}},
      &w);
  EXPECT_TRUE(sample.ok());
  auto not_matrix = cli::WindowFromMatrices({{"cpu", "nope"}}, &w);
  EXPECT_FALSE(not_matrix.ok());
  // Found by fuzz.cluster_view in CI: a series that is an array threw
  // nlohmann's type_error out of the report.
  auto array_series =
      cli::WindowFromMatrices({{"cpu", nlohmann::json::parse("[[300]]")}}, &w);
  EXPECT_FALSE(array_series.ok());
  EXPECT_THAT(array_series.message(), ::testing::HasSubstr("not an object"));
}

TEST(PrometheusQueriesTest, FiltersByNamespaceAndJob) {
  auto queries = cli::ClusterQueries("training", "ctr");
  bool saw_psi = false;
  for (const auto& q : queries) {
    if (q.name == "node_cpus") {
      EXPECT_EQ(q.promql, "trainscope_node_cpus or trainscope_node_cpu_count");
      continue;
    }
    if (q.name.rfind("nic_", 0) == 0) continue;
    EXPECT_THAT(q.promql, ::testing::HasSubstr(
                              "namespace=\"training\",training_job=\"ctr\""));
    if (q.name == "io_psi") {
      saw_psi = true;
      EXPECT_EQ(q.promql,
                "trainscope_pod_pressure_waiting_seconds_total{resource="
                "\"io\",namespace=\"training\",training_job=\"ctr\"}");
    }
  }
  EXPECT_TRUE(saw_psi);
  for (const auto& q : cli::ClusterQueries("", "")) {
    EXPECT_THAT(q.promql, ::testing::Not(::testing::HasSubstr("namespace=")));
  }
}

// The cluster view's replay: a hot PS over the whole range stays active; one
// that cooled down early has cleared by the end.
TEST(ReplayTest, ActiveAtTheEndOnlyWhileItLasts) {
  auto build = [](int hot_until) {
    diagnosis::Window w;
    for (int ps = 0; ps < 2; ++ps) {
      auto& t = w.pods["training/ctr-ps-" + std::to_string(ps)];
      t.meta = {"training", "ctr-ps-" + std::to_string(ps), "ctr", Role::kPs};
    }
    for (int wk = 0; wk < 3; ++wk) {
      auto& t = w.pods["training/ctr-worker-" + std::to_string(wk)];
      t.meta = {"training", "ctr-worker-" + std::to_string(wk), "ctr",
                Role::kWorker};
      double b0 = 0, b1 = 0;
      for (int i = 0; i < 20; ++i) {
        const bool hot = i < hot_until;
        b0 += (hot ? 9e6 : 5e6) * 5;
        b1 += (hot ? 1e6 : 5e6) * 5;
        diagnosis::PodPoint p;
        p.t = 1000 + 5 * i;
        p.peers["training/ctr-ps-0"] = {b0, 0};
        p.peers["training/ctr-ps-1"] = {b1, 0};
        t.points.push_back(p);
      }
    }
    w.peer_roles["training/ctr-ps-0"] = Role::kPs;
    w.peer_roles["training/ctr-ps-1"] = Role::kPs;
    return w;
  };
  auto hot = diagnosis::Replay(build(20), {});
  ASSERT_EQ(hot.active.size(), 1u);
  EXPECT_EQ(hot.active[0].pod, "ctr-ps-0");
  EXPECT_EQ(hot.evaluations, 18u);
  auto cooled = diagnosis::Replay(build(8), {});
  EXPECT_TRUE(cooled.active.empty());
}

}  // namespace
}  // namespace trainscope
