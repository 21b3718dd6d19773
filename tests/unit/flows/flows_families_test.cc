#include "flows/flows_families.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include <chrono>

#include "exporter/ps_share_families.h"
#include "flows/flows_sample.h"
#include "report/report_json.h"

namespace trainscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

PodInfo Pod(const std::string& name, Role role) {
  PodInfo p;
  p.uid = "u-" + name;
  p.name = name;
  p.namespace_name = "training";
  p.training_job = "ctr";
  p.role = role;
  return p;
}

std::string Render(const Snapshot& snapshot) {
  ExportContext ctx(snapshot, "node-a");
  std::vector<prometheus::MetricFamily> families;
  AppendFlowsFamilies(ctx, families);
  return prometheus::TextSerializer().Serialize(families);
}

TEST(FlowsFamilies, PeerSeriesShareAndHealth) {
  Snapshot s;
  s.pods = std::make_shared<const PodList>(
      PodList{Pod("ctr-worker-0", Role::kWorker), Pod("ctr-ps-0", Role::kPs)});
  PeerTrafficSample known;
  known.pod_uid = "u-ctr-worker-0";
  known.peer_uid = "u-ctr-ps-0";
  known.peer_namespace = "training";
  known.peer_pod = "ctr-ps-0";
  known.peer_role = Role::kPs;
  known.receive_bytes = 1000;
  known.transmit_bytes = 2000;
  known.receive_packets = 3;
  known.transmit_packets = 4;
  known.receive_payload_bytes = 900;
  known.transmit_payload_bytes = 1900;
  PeerTrafficSample unknown;
  unknown.pod_uid = "u-ctr-worker-0";
  unknown.receive_bytes = 77;
  PeerTrafficSample gone;  // local pod no longer in the table
  gone.pod_uid = "u-deleted";
  gone.receive_bytes = 5;
  s.peer_traffic = {known, unknown, gone};

  FlowsSample f;
  f.mode = "ebpf";
  f.map_entries = 12;
  f.map_max_entries = 65536;
  f.map_evictions_total = 3;
  f.map_insert_failures_total = 0;
  f.unattributed_bytes_total = 42;
  s.parts.Put(f);
  const std::string text = Render(s);
  EXPECT_THAT(
      text,
      HasSubstr(
          "trainscope_peer_receive_bytes_total{namespace=\"training\",peer_"
          "namespace=\"training\",peer_pod=\"ctr-ps-0\",peer_role=\"ps\",pod="
          "\"ctr-"
          "worker-0\",role=\"worker\",training_job=\"ctr\"} 1000"));
  EXPECT_THAT(
      text,
      HasSubstr(
          "trainscope_peer_receive_bytes_total{namespace=\"training\",peer_"
          "namespace=\"\",peer_pod=\"\",peer_role=\"\",pod=\"ctr-worker-0\","
          "role="
          "\"worker\",training_job=\"ctr\"} 77"));
  EXPECT_THAT(text, HasSubstr("trainscope_peer_transmit_packets_total{"));
  EXPECT_THAT(
      text, HasSubstr("peer_pod=\"ctr-ps-0\",peer_role=\"ps\",pod=\"ctr-worker-"
                      "0\",role=\"worker\",training_job=\"ctr\"} 1900"));
  EXPECT_THAT(text, Not(HasSubstr("u-deleted")));
  EXPECT_THAT(text, Not(HasSubstr(" 5\n")));
  EXPECT_THAT(text, HasSubstr("trainscope_flows_map_entries 12"));
  EXPECT_THAT(text, HasSubstr("trainscope_flows_map_evictions_total 3"));
  EXPECT_THAT(text, HasSubstr("trainscope_flows_map_max_entries 65536"));
  EXPECT_THAT(text, HasSubstr("trainscope_flows_unattributed_bytes_total 42"));
  EXPECT_THAT(text, HasSubstr("trainscope_flows_mode{mode=\"ebpf\"} 1"));
  // The unknown-peer aggregate carries no payload counters: none invented.
  EXPECT_THAT(text, Not(HasSubstr("trainscope_peer_receive_payload_bytes_"
                                  "total{namespace=\"training\",peer_"
                                  "namespace=\"\"")));
  // Not in eBPF mode: no pcap drop series rather than a made-up 0.
  EXPECT_THAT(text, Not(HasSubstr("trainscope_flows_pcap_kernel_drops_total")));
  // No label ever carries a port.
  EXPECT_THAT(text, Not(HasSubstr("port=")));
}

TEST(FlowsFamilies, WithoutAFlowsSampleOnlyPeerSeries) {
  Snapshot s;
  s.pods = std::make_shared<const PodList>(PodList{Pod("w", Role::kWorker)});
  PeerTrafficSample p;
  p.pod_uid = "u-w";
  p.transmit_bytes = 1;
  s.peer_traffic = {p};
  const std::string text = Render(s);
  EXPECT_THAT(text, HasSubstr("trainscope_peer_transmit_bytes_total{"));
  EXPECT_THAT(text, Not(HasSubstr("payload")));
  EXPECT_THAT(text, Not(HasSubstr("trainscope_flows_")));
  EXPECT_THAT(text, Not(HasSubstr("trainscope_ps_traffic")));
}

// Snapshots 5 s apart of a node running one worker and two PS, the worker's
// cumulative bytes to each PS given.
class PsShareSeries {
 public:
  PsShareSeries()
      : pods_(std::make_shared<const PodList>(
            PodList{Pod("ctr-worker-0", Role::kWorker),
                    Pod("ctr-ps-0", Role::kPs), Pod("ctr-ps-1", Role::kPs)})) {}
  std::shared_ptr<const Snapshot> Next(uint64_t to_ps0, uint64_t to_ps1) {
    auto s = std::make_shared<Snapshot>();
    s->taken_at = t0_ + std::chrono::seconds(5 * seq_);
    s->sequence = ++seq_;
    s->pods = pods_;
    for (const auto& pod : *pods_) s->pod_samples[pod.uid].uid = pod.uid;
    for (auto [peer, bytes] :
         {std::pair{"ctr-ps-0", to_ps0}, std::pair{"ctr-ps-1", to_ps1}}) {
      PeerTrafficSample p;
      p.pod_uid = "u-ctr-worker-0";
      p.peer_uid = std::string("u-") + peer;
      p.peer_namespace = "training";
      p.peer_pod = peer;
      p.peer_role = Role::kPs;
      p.transmit_bytes = bytes;
      s->peer_traffic.push_back(p);
    }
    return s;
  }

 private:
  std::shared_ptr<const PodList> pods_;
  std::chrono::system_clock::time_point t0_ =
      std::chrono::system_clock::now() - std::chrono::minutes(5);
  uint64_t seq_ = 0;
};

std::vector<prometheus::MetricFamily> PsFamilies(
    const diagnosis::DiagnosisRunner& runner) {
  Snapshot latest;
  ExportContext ctx(latest, "node-a");
  std::vector<prometheus::MetricFamily> families;
  PsShareSection(runner)(ctx, families);
  return families;
}

TEST(PsShareSection, ComputesFromTheDiagnosisWindow) {
  PsShareSeries series;
  diagnosis::DiagnosisRunner runner("node-a");  // window: 3 samples
  std::vector<std::shared_ptr<const Snapshot>> history = {
      series.Next(0, 0), series.Next(0, 1000000), series.Next(100, 1000000),
      series.Next(400, 1000100)};
  runner.Update(history);
  const std::string text =
      prometheus::TextSerializer().Serialize(PsFamilies(runner));
  // Old traffic outside the window does not count: only the last 3 samples.
  EXPECT_THAT(text, HasSubstr("trainscope_ps_traffic_share_ratio{namespace="
                              "\"training\",pod=\"ctr-ps-0\",training_job="
                              "\"ctr\"} 0.8"));
  EXPECT_THAT(text, HasSubstr("pod=\"ctr-ps-1\",training_job=\"ctr\"} 0.2"));
  EXPECT_THAT(text, HasSubstr("trainscope_ps_traffic_skew_ratio{namespace="
                              "\"training\",training_job=\"ctr\"} 1.6"));
  EXPECT_THAT(text, HasSubstr("over the diagnosis window (3 samples)"));

  // A window without bytes has no share (rather than a made-up 0), and
  // before the first evaluation there is nothing either.
  diagnosis::DiagnosisRunner idle("node-a");
  EXPECT_TRUE(PsFamilies(idle).empty());
  PsShareSeries quiet;
  idle.Update({quiet.Next(5, 5), quiet.Next(5, 5), quiet.Next(5, 5)});
  EXPECT_TRUE(PsFamilies(idle).empty());
}

TEST(PsShareSection, MetricAndReportAgree) {
  PsShareSeries series;
  diagnosis::DiagnosisRunner runner("node-a");
  std::vector<std::shared_ptr<const Snapshot>> history;
  // A hot PS: ps-0 carries 9 of every 10 bytes.
  for (uint64_t i = 0; i < 5; ++i) {
    history.push_back(series.Next(i * 9000000, i * 1000000));
    runner.Update(history);
  }
  nlohmann::json report =
      ReportView("node-a", *history.back()->pods, nlohmann::json::array(),
                 std::chrono::system_clock::now());
  SetPsTrafficShares(report, PsSharesOf(runner.Jobs()));
  const nlohmann::json& shares = report["jobs"][0]["ps_traffic_share"];
  ASSERT_EQ(shares.size(), 2u) << report.dump();

  size_t compared = 0;
  for (const auto& family : PsFamilies(runner)) {
    if (family.name != "trainscope_ps_traffic_share_ratio") continue;
    for (const auto& metric : family.metric) {
      std::string pod;
      for (const auto& label : metric.label) {
        if (label.name == "pod") pod = label.value;
      }
      ASSERT_TRUE(shares.contains(pod)) << pod;
      EXPECT_DOUBLE_EQ(metric.gauge.value, shares[pod].get<double>()) << pod;
      ++compared;
    }
  }
  EXPECT_EQ(compared, 2u);
  EXPECT_NEAR(shares["ctr-ps-0"].get<double>(), 0.9, 1e-9);
}

}  // namespace
}  // namespace trainscope
