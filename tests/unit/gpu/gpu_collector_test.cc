#include "gpu/gpu_collector.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "gpu/gpu_families.h"
#include "gpu_test_env.h"

namespace trainscope::gpu_test {
namespace {

using ::testing::DoubleEq;
using ::testing::HasSubstr;
using ::testing::Optional;

class GpuCollectorTest : public GpuEnv {
 protected:
  Status Collect(GpuCollector& c, Snapshot& snap) {
    snap.pods = pods_;
    CollectContext ctx{host_, pods_};
    return c.Collect(ctx, snap);
  }

  const GpuPodUsage* Usage(const Snapshot& snap, const std::string& uid,
                           unsigned gpu) {
    for (const auto& u : snap.gpu_pods) {
      if (u.pod_uid == uid && u.gpu_index == gpu) return &u;
    }
    return nullptr;
  }
};

TEST_F(GpuCollectorTest, NoLibraryIsNoDataAndNeverCrashes) {
  GpuCollector c(host_, (root_ / "no" / "libnvidia-ml.so.1").string());
  for (int i = 0; i < 3; ++i) {
    Snapshot snap;
    Status s = Collect(c, snap);
    EXPECT_EQ(s.code(), Status::Code::kNoData);
    EXPECT_THAT(s.message(), HasSubstr("libnvidia-ml.so.1"));
    EXPECT_TRUE(snap.gpus.empty());
  }
}

TEST_F(GpuCollectorTest, LibraryMissingSymbolsIsAClearError) {
  WriteConfig({{"devices", {Device(0)}}});
  GpuCollector c(host_, FAKE_NVML_MISSING_SYMBOLS_PATH);
  Snapshot snap;
  Status s = Collect(c, snap);
  EXPECT_EQ(s.code(), Status::Code::kError);
  EXPECT_THAT(s.message(), HasSubstr("nvmlDeviceGetCount_v2"));
  EXPECT_TRUE(snap.gpus.empty());
}

TEST_F(GpuCollectorTest, DriverInstalledLaterIsPickedUpOnRetry) {
  WriteConfig({{"devices", {Device(0)}}});
  fs::path later = root_ / "lib" / "libnvidia-ml.so.1";
  GpuCollector c(host_, later.string(), std::chrono::seconds(0));
  Snapshot before;
  EXPECT_EQ(Collect(c, before).code(), Status::Code::kNoData);
  fs::create_directories(later.parent_path());
  fs::copy_file(FAKE_NVML_PATH, later);
  Snapshot after;
  EXPECT_TRUE(Collect(c, after).ok());
  EXPECT_EQ(after.gpus.size(), 1u);
}

TEST_F(GpuCollectorTest, DriverNotLoadedIsNoData) {
  WriteConfig({{"init_result", 9}, {"devices", {Device(0)}}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  Status s = Collect(c, snap);
  EXPECT_EQ(s.code(), Status::Code::kNoData);
  EXPECT_THAT(s.message(), HasSubstr("Driver Not Loaded"));
}

TEST_F(GpuCollectorTest, ZeroDevicesIsNoData) {
  WriteConfig({{"devices", nlohmann::json::array()}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  Status s = Collect(c, snap);
  EXPECT_EQ(s.code(), Status::Code::kNoData);
  EXPECT_THAT(s.message(), HasSubstr("no GPUs"));
  EXPECT_TRUE(snap.gpus.empty());
}

// Checked on a real H100: NVML's `used` includes 480 MiB the driver
// reserves, which nvidia-smi leaves out; only _v2 reports it.
TEST_F(GpuCollectorTest, MemoryUsedLeavesOutWhatTheDriverReserves) {
  nlohmann::json device = Device(0);
  device["memory_reserved"] = 503316480ULL;
  WriteConfig({{"devices", nlohmann::json::array({device})}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  ASSERT_TRUE(Collect(c, snap).ok());
  ASSERT_EQ(snap.gpus.size(), 1u);
  EXPECT_EQ(snap.gpus[0].memory_used_bytes, 1073741824ULL);
  EXPECT_EQ(snap.gpus[0].memory_total_bytes, 42949672960ULL);
}

TEST_F(GpuCollectorTest, EightDevicesInBaseUnits) {
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < 8; ++i) devices.push_back(Device(i));
  WriteConfig({{"devices", devices}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  ASSERT_TRUE(Collect(c, snap).ok());
  ASSERT_EQ(snap.gpus.size(), 8u);
  for (unsigned i = 0; i < 8; ++i) {
    const auto& g = snap.gpus[i];
    EXPECT_EQ(g.index, i);
    EXPECT_EQ(g.uuid, Device(i)["uuid"]);
    EXPECT_EQ(g.model_name, "NVIDIA A100-SXM4-40GB");
    EXPECT_THAT(g.gpu_utilization_ratio, Optional(DoubleEq((40 + i) / 100.0)));
    EXPECT_THAT(g.memory_utilization_ratio,
                Optional(DoubleEq((10 + i) / 100.0)));
    EXPECT_EQ(g.memory_used_bytes, 1073741824ULL * (i + 1));
    EXPECT_EQ(g.memory_total_bytes, 42949672960ULL);
    EXPECT_THAT(g.power_watts, Optional(DoubleEq(250 + i / 1000.0)));
    EXPECT_THAT(g.temperature_celsius, Optional(DoubleEq(50 + i)));
    EXPECT_THAT(g.sm_clock_hertz, Optional(DoubleEq(1410e6)));
    EXPECT_THAT(g.pcie_transmit_bytes_per_second,
                Optional(DoubleEq(1000 * 1024.0)));
    EXPECT_THAT(g.pcie_receive_bytes_per_second,
                Optional(DoubleEq(2000 * 1024.0)));
    EXPECT_EQ(g.ecc_corrected_errors, 3u);
    EXPECT_EQ(g.ecc_uncorrected_errors, 0u);
    EXPECT_EQ(g.pcie_replays, 7u);
    EXPECT_EQ(g.retired_pages_single_bit, 1u);
    EXPECT_EQ(g.process_count, 0u);
  }
}

TEST_F(GpuCollectorTest, ManyProcessesGrowTheBufferUntilAllFit) {
  AddPod(kPodA, "ctr-worker-0", "trainer", kCtrA);
  nlohmann::json procs = nlohmann::json::array();
  constexpr unsigned kProcs = 300;  // far above the first buffer (16)
  for (unsigned pid = 1000; pid < 1000 + kProcs; ++pid) {
    procs.push_back({{"pid", pid}, {"used_memory", 1000}, {"sm_util", 0}});
    AddProc(pid, V2SystemdCgroup(kPodA, kCtrA));
  }
  WriteConfig({{"devices", {Device(0, procs)}}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  ASSERT_TRUE(Collect(c, snap).ok());
  EXPECT_EQ(snap.gpus[0].process_count, kProcs);
  const auto* u = Usage(snap, kPodA, 0);
  ASSERT_NE(u, nullptr);
  EXPECT_EQ(u->processes, kProcs);
  EXPECT_EQ(u->memory_used_bytes, 1000u * kProcs);
}

TEST_F(GpuCollectorTest, ProcessThatExitedIsSkippedSilently) {
  AddPod(kPodA, "ctr-worker-0", "trainer", kCtrA);
  AddProc(100, V2SystemdCgroup(kPodA, kCtrA));
  // PID 101 is listed by NVML but has no /proc entry any more.
  WriteConfig({{"devices",
                {Device(0, {{{"pid", 100}, {"used_memory", 5}},
                            {{"pid", 101}, {"used_memory", 7}}})}}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  ASSERT_TRUE(Collect(c, snap).ok());
  ASSERT_EQ(snap.gpu_pods.size(), 1u);
  EXPECT_EQ(snap.gpu_pods[0].memory_used_bytes, 5u);
  EXPECT_EQ(snap.gpu_pods[0].processes, 1u);
}

TEST_F(GpuCollectorTest, SystemServiceProcessIsNotAttributedToAnyPod) {
  AddProc(300, "0::/system.slice/nvidia-persistenced.service\n");
  WriteConfig({{"devices", {Device(0, {{{"pid", 300}, {"used_memory", 9}}})}}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  ASSERT_TRUE(Collect(c, snap).ok());
  EXPECT_EQ(snap.gpus[0].process_count, 1u);
  EXPECT_TRUE(snap.gpu_pods.empty());
}

TEST_F(GpuCollectorTest, TwoPodsSharingAGpuEachGetTheirOwnProcesses) {
  AddPod(kPodA, "ctr-worker-0", "trainer", kCtrA);
  AddPod(kPodB, "ctr-worker-1", "tf", kCtrB);
  AddProc(100, V2SystemdCgroup(kPodA, kCtrA));
  AddProc(101, V2SystemdCgroup(kPodA, kCtrA));
  AddProc(200, V1CgroupfsCgroup(kPodB, kCtrB));
  WriteConfig(
      {{"devices",
        {Device(0, {{{"pid", 100}, {"used_memory", 1000}, {"sm_util", 70}},
                    {{"pid", 101}, {"used_memory", 500}, {"sm_util", 60}},
                    {{"pid", 200}, {"used_memory", 300}, {"sm_util", 5}}}),
         Device(1, {{{"pid", 200}, {"used_memory", 40}, {"sm_util", 20}}})}}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  ASSERT_TRUE(Collect(c, snap).ok());
  ASSERT_EQ(snap.gpu_pods.size(), 3u);

  const auto* a0 = Usage(snap, kPodA, 0);
  ASSERT_NE(a0, nullptr);
  EXPECT_EQ(a0->container, "trainer");
  EXPECT_EQ(a0->gpu_uuid, Device(0)["uuid"]);
  EXPECT_EQ(a0->memory_used_bytes, 1500u);
  EXPECT_THAT(a0->utilization_ratio, Optional(DoubleEq(1.0)));  // 130% capped

  const auto* b0 = Usage(snap, kPodB, 0);
  ASSERT_NE(b0, nullptr);
  EXPECT_EQ(b0->container, "tf");
  EXPECT_EQ(b0->memory_used_bytes, 300u);
  EXPECT_THAT(b0->utilization_ratio, Optional(DoubleEq(0.05)));

  const auto* b1 = Usage(snap, kPodB, 1);
  ASSERT_NE(b1, nullptr);
  EXPECT_EQ(b1->memory_used_bytes, 40u);
  EXPECT_THAT(b1->utilization_ratio, Optional(DoubleEq(0.2)));
  EXPECT_EQ(Usage(snap, kPodA, 1), nullptr);
}

TEST_F(GpuCollectorTest, PodNotInTheTableKeepsItsUidAndShortContainerId) {
  AddProc(100, V2SystemdCgroup(kPodA, kCtrA));
  WriteConfig({{"devices", {Device(0, {{{"pid", 100}, {"used_memory", 1}}})}}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  ASSERT_TRUE(Collect(c, snap).ok());
  ASSERT_EQ(snap.gpu_pods.size(), 1u);
  EXPECT_EQ(snap.gpu_pods[0].pod_uid, kPodA);
  EXPECT_EQ(snap.gpu_pods[0].container, kCtrA.substr(0, 12));
}

TEST_F(GpuCollectorTest, UnknownProcessMemoryAndUtilizationStayEmpty) {
  AddPod(kPodA, "ctr-worker-0", "trainer", kCtrA);
  AddProc(100, V2SystemdCgroup(kPodA, kCtrA));
  nlohmann::json dev =
      Device(0, {{{"pid", 100}, {"used_memory", nullptr}, {"sm_util", 50}}});
  dev["process_utilization_supported"] = false;
  WriteConfig({{"devices", {dev}}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  ASSERT_TRUE(Collect(c, snap).ok());
  ASSERT_EQ(snap.gpu_pods.size(), 1u);
  EXPECT_EQ(snap.gpu_pods[0].memory_used_bytes, std::nullopt);
  EXPECT_EQ(snap.gpu_pods[0].utilization_ratio, std::nullopt);
  EXPECT_EQ(snap.gpu_pods[0].processes, 1u);
}

TEST_F(GpuCollectorTest, IdleProcessesReportZeroUtilizationOnTheNextCycle) {
  AddPod(kPodA, "ctr-worker-0", "trainer", kCtrA);
  AddProc(100, V2SystemdCgroup(kPodA, kCtrA));
  WriteConfig(
      {{"devices",
        {Device(0, {{{"pid", 100}, {"used_memory", 1}, {"sm_util", 0}}})}}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  for (int cycle = 0; cycle < 2; ++cycle) {
    Snapshot snap;
    ASSERT_TRUE(Collect(c, snap).ok());
    ASSERT_EQ(snap.gpu_pods.size(), 1u);
    EXPECT_THAT(snap.gpu_pods[0].utilization_ratio, Optional(DoubleEq(0.0)));
  }
}

TEST_F(GpuCollectorTest, NotSupportedPowerAndPcieLeaveValuesAndSeriesOut) {
  nlohmann::json dev = Device(0);
  dev["power_mw"] = nullptr;
  dev["pcie_tx_kbps"] = nullptr;
  dev["pcie_rx_kbps"] = nullptr;
  dev["ecc_sbe_volatile"] = nullptr;
  WriteConfig({{"devices", {dev}}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot snap;
  ASSERT_TRUE(Collect(c, snap).ok());
  ASSERT_EQ(snap.gpus.size(), 1u);
  const auto& g = snap.gpus[0];
  EXPECT_EQ(g.power_watts, std::nullopt);
  EXPECT_EQ(g.pcie_transmit_bytes_per_second, std::nullopt);
  EXPECT_EQ(g.pcie_receive_bytes_per_second, std::nullopt);
  EXPECT_EQ(g.ecc_corrected_errors, std::nullopt);
  EXPECT_TRUE(g.temperature_celsius.has_value());

  ExportContext ctx(snap, "node-a");
  std::vector<prometheus::MetricFamily> families;
  AppendGpuFamilies(ctx, families);
  auto has = [&](const std::string& name) {
    return std::any_of(families.begin(), families.end(),
                       [&](const auto& f) { return f.name == name; });
  };
  EXPECT_TRUE(has("trainscope_gpu_temperature_celsius"));
  EXPECT_TRUE(has("trainscope_gpu_utilization_ratio"));
  EXPECT_FALSE(has("trainscope_gpu_power_watts"));
  EXPECT_FALSE(has("trainscope_gpu_pcie_transmit_bytes_per_second"));
  EXPECT_FALSE(has("trainscope_gpu_pcie_receive_bytes_per_second"));
  EXPECT_FALSE(has("trainscope_gpu_ecc_corrected_errors_total"));
}

TEST_F(GpuCollectorTest, CountsXidErrorsRaisedAfterRegistration) {
  nlohmann::json devices = {Device(0), Device(1)};
  devices[0]["xid_events"] = {13};  // before the agent watched: not counted
  devices[1]["xid_supported"] = false;
  WriteConfig({{"devices", devices}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot first;
  ASSERT_TRUE(Collect(c, first).ok());
  EXPECT_EQ(first.gpus[0].xid_errors, 0u);
  EXPECT_EQ(first.gpus[0].last_xid, std::nullopt);
  EXPECT_EQ(first.gpus[1].xid_errors, std::nullopt);

  devices[0]["xid_events"] = {13, 79, 48};
  WriteConfig({{"devices", devices}});
  Snapshot second;
  ASSERT_TRUE(Collect(c, second).ok());
  EXPECT_EQ(second.gpus[0].xid_errors, 2u);
  EXPECT_EQ(second.gpus[0].last_xid, 48u);
  Snapshot third;  // counters are cumulative; nothing new arrived
  ASSERT_TRUE(Collect(c, third).ok());
  EXPECT_EQ(third.gpus[0].xid_errors, 2u);
}

TEST_F(GpuCollectorTest, GpuLostMidRunKeepsReportingTheOthers) {
  AddPod(kPodA, "ctr-worker-0", "trainer", kCtrA);
  AddProc(100, V2SystemdCgroup(kPodA, kCtrA));
  nlohmann::json devices = {Device(0), Device(1, {{{"pid", 100}}}), Device(2)};
  WriteConfig({{"devices", devices}});
  GpuCollector c(host_, FAKE_NVML_PATH);
  Snapshot first;
  ASSERT_TRUE(Collect(c, first).ok());
  EXPECT_EQ(first.gpus.size(), 3u);
  EXPECT_EQ(first.gpu_pods.size(), 1u);

  devices[1]["lost"] = true;
  WriteConfig({{"devices", devices}});
  Snapshot second;
  Status s = Collect(c, second);
  EXPECT_EQ(s.code(), Status::Code::kError);
  EXPECT_THAT(s.message(),
              HasSubstr("GPU 1 (" + devices[1]["uuid"].get<std::string>() +
                        ") is lost"));
  EXPECT_THAT(s.message(), HasSubstr("GPU is lost"));
  ASSERT_EQ(second.gpus.size(), 2u);
  EXPECT_EQ(second.gpus[0].index, 0u);
  EXPECT_EQ(second.gpus[1].index, 2u);
  EXPECT_TRUE(second.gpu_pods.empty());  // its processes went with it

  devices[1]["lost"] = false;
  WriteConfig({{"devices", devices}});
  Snapshot third;
  EXPECT_TRUE(Collect(c, third).ok());
  EXPECT_EQ(third.gpus.size(), 3u);
}

}  // namespace
}  // namespace trainscope::gpu_test
