#include "exporter/exporter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cgroup/pod_families.h"
#include "exporter/collector_families.h"
#include "node/node_families.h"

namespace trainscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

PodInfo Pod(const std::string& uid, const std::string& name, Role role,
            int index) {
  PodInfo pod;
  pod.uid = uid;
  pod.namespace_name = "training";
  pod.name = name;
  pod.training_job = "ctr";
  pod.role = role;
  pod.replica_index = index;
  pod.job_kind = JobKind::kTFJob;
  pod.framework = Framework::kTensorFlow2;
  pod.pod_ip = "198.18.0.2";
  return pod;
}

std::shared_ptr<Snapshot> SnapshotWith(std::vector<PodInfo> pods) {
  auto snap = std::make_shared<Snapshot>();
  snap->pods = std::make_shared<const PodList>(std::move(pods));
  for (const auto& pod : *snap->pods) {
    PodSample& s = snap->pod_samples[pod.uid];
    s.uid = pod.uid;
    s.cgroup.cpu.usage_seconds = 12.5;
    s.cgroup.memory.working_set_bytes = 1024;
    s.cgroup.cpu_pressure.some_seconds = 0.5;
    s.containers.push_back({.name = "tensorflow", .id = "abc"});
    s.containers.back().cgroup.cpu.usage_seconds = 12.0;
    s.network = NetDevCounters{.receive_bytes = 7, .transmit_bytes = 9};
  }
  snap->collectors.push_back({"cgroup", Status::Ok(), 0.001});
  snap->collectors.push_back({"gpu", Status::NoData("no NVML"), 0.0});
  return snap;
}

std::string Render(History& history) {
  Exporter exporter(
      history, "node-a",
      {AppendPodFamilies, AppendNodeFamilies, AppendCollectorFamilies},
      SelfStats{.discovery_mode = "file", .discovery = [] {
                  return DiscoveryStats{.ready = true, .errors_total = 3};
                }});
  return exporter.Render();
}

TEST(ExporterTest, RendersPodSeriesWithIdentityLabels) {
  History history(4);
  history.Push(SnapshotWith({Pod("u1", "ctr-ps-0", Role::kPs, 0)}));
  std::string text = Render(history);
  EXPECT_THAT(text, HasSubstr("# TYPE trainscope_pod_cpu_usage_seconds_total "
                              "counter"));
  EXPECT_THAT(text,
              HasSubstr("trainscope_pod_cpu_usage_seconds_total{namespace="
                        "\"training\",pod=\"ctr-ps-0\",replica_index=\"0\","
                        "role=\"ps\",training_job=\"ctr\"} 12.5"));
  EXPECT_THAT(text, HasSubstr("trainscope_container_cpu_usage_seconds_total{"
                              "container=\"tensorflow\""));
  EXPECT_THAT(text, HasSubstr("trainscope_pod_pressure_waiting_seconds_total{"
                              "namespace=\"training\",pod=\"ctr-ps-0\","
                              "replica_index=\"0\",resource=\"cpu\""));
  EXPECT_THAT(text, HasSubstr("trainscope_pod_network_transmit_bytes_total{"
                              "namespace=\"training\",pod=\"ctr-ps-0\""));
  EXPECT_THAT(text, HasSubstr("trainscope_pod_info{framework=\"tensorflow2\","
                              "host_network=\"false\",job_kind=\"TFJob\","
                              "namespace=\"training\",node=\"node-a\","
                              "pod=\"ctr-ps-0\",pod_ip=\"198.18.0.2\""));
  EXPECT_THAT(text,
              HasSubstr("trainscope_collector_up{collector=\"cgroup\"} 1"));
  EXPECT_THAT(text, HasSubstr("trainscope_collector_up{collector=\"gpu\"} 0"));
  EXPECT_THAT(text,
              HasSubstr("trainscope_discovery_errors_total{mode=\"file\"} 3"));
  EXPECT_THAT(text, HasSubstr("trainscope_build_info{"));
  // Values we could not read are absent, never a made-up 0.
  EXPECT_THAT(text, Not(HasSubstr("trainscope_pod_memory_limit_bytes")));
  EXPECT_THAT(text, Not(HasSubstr("trainscope_pod_cpu_limit_cores")));
  // The label Prometheus owns is never used.
  EXPECT_THAT(text, Not(HasSubstr("{job=")));
  EXPECT_THAT(text, Not(HasSubstr(",job=")));
}

TEST(ExporterTest, DeletedPodLosesItsSeriesAtTheNextSnapshot) {
  History history(4);
  history.Push(SnapshotWith({Pod("u1", "ctr-ps-0", Role::kPs, 0),
                             Pod("u2", "ctr-worker-0", Role::kWorker, 0)}));
  EXPECT_THAT(Render(history), HasSubstr("pod=\"ctr-worker-0\""));
  history.Push(SnapshotWith({Pod("u1", "ctr-ps-0", Role::kPs, 0)}));
  std::string text = Render(history);
  EXPECT_THAT(text, HasSubstr("pod=\"ctr-ps-0\""));
  EXPECT_THAT(text, Not(HasSubstr("ctr-worker-0")));
}

TEST(ExporterTest, SampleOfAPodDiscoveryNoLongerKnowsIsNotExported) {
  History history(4);
  auto snap = SnapshotWith({Pod("u1", "ctr-ps-0", Role::kPs, 0)});
  snap->pod_samples["gone"].cgroup.cpu.usage_seconds = 1;
  history.Push(snap);
  EXPECT_THAT(Render(history), Not(HasSubstr("pod=\"\"")));
}

TEST(ExporterTest, BeforeTheFirstSampleOnlySelfMetrics) {
  History history(4);
  std::string text = Render(history);
  EXPECT_THAT(text, HasSubstr("trainscope_build_info"));
  EXPECT_THAT(text, Not(HasSubstr("trainscope_pod_")));
}

}  // namespace
}  // namespace trainscope
