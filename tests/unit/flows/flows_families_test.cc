#include "exporter/flows_families.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

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

std::string Render(const Snapshot& snapshot, const FlowsReport* report) {
  ExportContext ctx(snapshot, "node-a");
  std::vector<prometheus::MetricFamily> families;
  AppendFlowsFamiliesFrom(ctx, report, families);
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
  PeerTrafficSample unknown;
  unknown.pod_uid = "u-ctr-worker-0";
  unknown.receive_bytes = 77;
  PeerTrafficSample gone;  // local pod no longer in the table
  gone.pod_uid = "u-deleted";
  gone.receive_bytes = 5;
  s.peer_traffic = {known, unknown, gone};

  FlowsReport r;
  r.mode = "ebpf";
  r.map_entries = 12;
  r.map_capacity = 65536;
  r.map_evictions_total = 3;
  r.map_insert_failures_total = 0;
  r.payload_bytes[{"u-ctr-worker-0", "u-ctr-ps-0"}] = {900, 1900};
  const std::string text = Render(s, &r);
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
  EXPECT_THAT(text, HasSubstr("trainscope_flows_mode{mode=\"ebpf\"} 1"));
  // Not in eBPF mode: no pcap drop series rather than a made-up 0.
  EXPECT_THAT(text, Not(HasSubstr("trainscope_flows_pcap_kernel_drops_total")));
  // No label ever carries a port.
  EXPECT_THAT(text, Not(HasSubstr("port=")));
}

TEST(FlowsFamilies, WithoutAReportOnlyPeerSeries) {
  Snapshot s;
  s.pods = std::make_shared<const PodList>(PodList{Pod("w", Role::kWorker)});
  PeerTrafficSample p;
  p.pod_uid = "u-w";
  p.transmit_bytes = 1;
  s.peer_traffic = {p};
  const std::string text = Render(s, nullptr);
  EXPECT_THAT(text, HasSubstr("trainscope_peer_transmit_bytes_total{"));
  EXPECT_THAT(text, Not(HasSubstr("payload")));
  EXPECT_THAT(text, Not(HasSubstr("trainscope_flows_")));
  EXPECT_THAT(text, Not(HasSubstr("trainscope_ps_traffic")));
}

TEST(PsShareSection, ComputesFromTheHistoryWindow) {
  auto pods = std::make_shared<const PodList>(
      PodList{Pod("ctr-worker-0", Role::kWorker), Pod("ctr-ps-0", Role::kPs),
              Pod("ctr-ps-1", Role::kPs)});
  auto snap = [&](uint64_t to_ps0, uint64_t to_ps1) {
    auto s = std::make_shared<Snapshot>();
    s->pods = pods;
    for (auto [peer, bytes] :
         {std::pair{"ctr-ps-0", to_ps0}, std::pair{"ctr-ps-1", to_ps1}}) {
      PeerTrafficSample p;
      p.pod_uid = "u-ctr-worker-0";
      p.peer_uid = std::string("u-") + peer;
      p.transmit_bytes = bytes;
      s->peer_traffic.push_back(p);
    }
    return s;
  };
  History history(10);
  // Old traffic outside the window must not count: only the last 3 samples.
  history.Push(snap(0, 0));
  history.Push(snap(0, 1000000));
  history.Push(snap(100, 1000000));
  history.Push(snap(400, 1000100));
  Snapshot latest;
  ExportContext ctx(latest, "node-a");
  std::vector<prometheus::MetricFamily> families;
  PsShareSection(history, 3)(ctx, families);
  const std::string text = prometheus::TextSerializer().Serialize(families);
  EXPECT_THAT(text, HasSubstr("trainscope_ps_traffic_share_ratio{namespace="
                              "\"training\",pod=\"ctr-ps-0\",training_job="
                              "\"ctr\"} 0.8"));
  EXPECT_THAT(text, HasSubstr("pod=\"ctr-ps-1\",training_job=\"ctr\"} 0.2"));
  EXPECT_THAT(text, HasSubstr("trainscope_ps_traffic_skew_ratio{namespace="
                              "\"training\",training_job=\"ctr\"} 1.6"));
  EXPECT_THAT(text, HasSubstr("over the last 3 samples"));

  // A window without bytes has no share (rather than a made-up 0).
  History idle(10);
  idle.Push(snap(5, 5));
  idle.Push(snap(5, 5));
  families.clear();
  PsShareSection(idle, 3)(ctx, families);
  EXPECT_TRUE(families.empty());
}

}  // namespace
}  // namespace trainscope
