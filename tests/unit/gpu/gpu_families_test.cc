#include "gpu/gpu_families.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "trainscope/snapshot.h"

namespace trainscope {
namespace {

using Labels = std::map<std::string, std::string>;

const prometheus::MetricFamily* Find(
    const std::vector<prometheus::MetricFamily>& families,
    const std::string& name) {
  for (const auto& f : families) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Labels LabelsOf(const prometheus::ClientMetric& m) {
  Labels out;
  for (const auto& l : m.label) out[l.name] = l.value;
  return out;
}

class GpuFamiliesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto pods = std::make_shared<PodList>();
    PodInfo ps;
    ps.uid = "uid-ps";
    ps.namespace_name = "training";
    ps.name = "ctr-worker-3";
    ps.training_job = "ctr";
    ps.role = Role::kWorker;
    ps.replica_index = 3;
    pods->push_back(ps);
    snap_.pods = pods;

    GpuDeviceSample g;
    g.index = 1;
    g.uuid = "GPU-abc";
    g.model_name = "Tesla T4";
    g.gpu_utilization_ratio = 0.25;
    g.memory_used_bytes = 1024;
    g.memory_total_bytes = 4096;
    g.ecc_uncorrected_errors = 2;
    g.retired_pages_double_bit = 1;
    g.xid_errors = 2;
    g.last_xid = 79;
    snap_.gpus.push_back(g);

    GpuPodUsage known;
    known.pod_uid = "uid-ps";
    known.container = "tensorflow";
    known.gpu_index = 1;
    known.gpu_uuid = "GPU-abc";
    known.memory_used_bytes = 512;
    known.utilization_ratio = 0.1;
    snap_.gpu_pods.push_back(known);
    GpuPodUsage gone = known;
    gone.pod_uid = "uid-deleted";
    snap_.gpu_pods.push_back(gone);
  }

  Snapshot snap_;
};

TEST_F(GpuFamiliesTest, DeviceSeriesCarryDcgmLabelsAndNode) {
  ExportContext ctx(snap_, "node-a");
  std::vector<prometheus::MetricFamily> families;
  AppendGpuFamilies(ctx, families);

  const auto* util = Find(families, "trainscope_gpu_utilization_ratio");
  ASSERT_NE(util, nullptr);
  EXPECT_EQ(util->type, prometheus::MetricType::Gauge);
  ASSERT_EQ(util->metric.size(), 1u);
  EXPECT_EQ(LabelsOf(util->metric[0]), (Labels{{"gpu", "1"},
                                               {"UUID", "GPU-abc"},
                                               {"modelName", "Tesla T4"},
                                               {"node", "node-a"}}));
  EXPECT_DOUBLE_EQ(util->metric[0].gauge.value, 0.25);

  const auto* ecc =
      Find(families, "trainscope_gpu_ecc_uncorrected_errors_total");
  ASSERT_NE(ecc, nullptr);
  EXPECT_EQ(ecc->type, prometheus::MetricType::Counter);
  EXPECT_DOUBLE_EQ(ecc->metric[0].counter.value, 2);

  const auto* retired = Find(families, "trainscope_gpu_retired_pages");
  ASSERT_NE(retired, nullptr);
  ASSERT_EQ(retired->metric.size(), 1u);  // single-bit count unknown
  EXPECT_EQ(LabelsOf(retired->metric[0])["cause"], "double_bit_ecc");

  const auto* xid = Find(families, "trainscope_gpu_xid_errors_total");
  ASSERT_NE(xid, nullptr);
  EXPECT_EQ(xid->type, prometheus::MetricType::Counter);
  EXPECT_DOUBLE_EQ(xid->metric[0].counter.value, 2);
  const auto* last = Find(families, "trainscope_gpu_last_xid");
  ASSERT_NE(last, nullptr);
  EXPECT_DOUBLE_EQ(last->metric[0].gauge.value, 79);

  // Values the device did not report have no series at all.
  EXPECT_EQ(Find(families, "trainscope_gpu_power_watts"), nullptr);
  EXPECT_EQ(Find(families, "trainscope_gpu_memory_utilization_ratio"), nullptr);
  EXPECT_EQ(Find(families, "trainscope_gpu_ecc_corrected_errors_total"),
            nullptr);
}

TEST_F(GpuFamiliesTest, PodSeriesCarryPodContainerAndDeviceLabels) {
  ExportContext ctx(snap_, "node-a");
  std::vector<prometheus::MetricFamily> families;
  AppendGpuFamilies(ctx, families);

  const auto* mem = Find(families, "trainscope_pod_gpu_memory_used_bytes");
  ASSERT_NE(mem, nullptr);
  // The pod that discovery no longer knows has no series.
  ASSERT_EQ(mem->metric.size(), 1u);
  EXPECT_EQ(LabelsOf(mem->metric[0]), (Labels{{"namespace", "training"},
                                              {"pod", "ctr-worker-3"},
                                              {"training_job", "ctr"},
                                              {"role", "worker"},
                                              {"replica_index", "3"},
                                              {"container", "tensorflow"},
                                              {"gpu", "1"},
                                              {"UUID", "GPU-abc"},
                                              {"modelName", "Tesla T4"}}));
  EXPECT_DOUBLE_EQ(mem->metric[0].gauge.value, 512);

  const auto* util = Find(families, "trainscope_pod_gpu_utilization_ratio");
  ASSERT_NE(util, nullptr);
  ASSERT_EQ(util->metric.size(), 1u);
  EXPECT_DOUBLE_EQ(util->metric[0].gauge.value, 0.1);

  // The GPU's Xid counter and latest code, with the pod's labels (as
  // dcgm-exporter's DCGM_FI_DEV_XID_ERRORS), for gpu_error's cluster view.
  const auto* xids = Find(families, "trainscope_pod_gpu_xid_errors_total");
  ASSERT_NE(xids, nullptr);
  ASSERT_EQ(xids->metric.size(), 1u);
  EXPECT_EQ(LabelsOf(xids->metric[0]), LabelsOf(mem->metric[0]));
  EXPECT_DOUBLE_EQ(xids->metric[0].counter.value, 2);
  const auto* last = Find(families, "trainscope_pod_gpu_last_xid");
  ASSERT_NE(last, nullptr);
  ASSERT_EQ(last->metric.size(), 1u);
  EXPECT_DOUBLE_EQ(last->metric[0].gauge.value, 79);
}

TEST_F(GpuFamiliesTest, NoGpusNoFamilies) {
  Snapshot empty;
  ExportContext ctx(empty, "node-a");
  std::vector<prometheus::MetricFamily> families;
  AppendGpuFamilies(ctx, families);
  EXPECT_TRUE(families.empty());
}

}  // namespace
}  // namespace trainscope
