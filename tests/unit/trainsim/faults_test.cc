#include "faults.h"

#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include "fault_gate.h"

namespace trainsim {
namespace {

TEST(FakeNvmlConfigTest, OneGpuPerFaultedPodWithItsProcess) {
  Scenario s = ParseScenarioText(
      R"({"name": "g", "jobs": [{"name": "j", "ps": 1, "workers": 2}],
      "faults": [{"kind": "gpu", "pod": "j-worker-1", "utilization": 0.07, "memory_bytes": 1073741824}]})");
  Layout l = MakeLayout(s, "0a1b2c3d");
  const SimPod* pod = l.Find("j-worker-1");
  nlohmann::json c = FakeNvmlConfig({{pod, 4242, &s.faults[0]}});
  EXPECT_EQ(c["init_result"], 0);
  ASSERT_EQ(c["devices"].size(), 1u);
  const auto& d = c["devices"][0];
  EXPECT_EQ(d["uuid"], "GPU-" + pod->uid);
  EXPECT_EQ(d["utilization_gpu"], 7);
  EXPECT_EQ(d["memory_used"], 1073741824);
  EXPECT_EQ(d["processes"],
            nlohmann::json::parse(
                R"([{"pid": 4242, "used_memory": 1073741824, "sm_util": 7}])"));
  EXPECT_EQ(FakeNvmlConfig({})["devices"].size(), 0u);
}

// gpu.xid: the pod's GPU lists that Xid for the fake NVML to deliver; no
// xid, no events; a code outside 0..65535 is a scenario error.
TEST(FakeNvmlConfigTest, AnXidFaultListsTheXidOnThePodsGpu) {
  Scenario s = ParseScenarioText(
      R"({"name": "g", "jobs": [{"name": "j", "ps": 1, "workers": 1}],
      "faults": [{"kind": "gpu", "pod": "j-worker-0", "utilization": 0.5},
                 {"kind": "gpu", "pod": "j-worker-0", "utilization": 0.5,
                  "xid": 79, "start_s": 20}]})");
  Layout l = MakeLayout(s, "0a1b2c3d");
  const SimPod* pod = l.Find("j-worker-0");
  EXPECT_EQ(
      FakeNvmlConfig({{pod, 1, &s.faults[0]}})["devices"][0]["xid_events"],
      nlohmann::json::array());
  const auto d = FakeNvmlConfig({{pod, 1, &s.faults[1]}})["devices"][0];
  EXPECT_EQ(d["xid_events"], nlohmann::json::array({79}));
  EXPECT_EQ(d["uuid"], "GPU-" + pod->uid);  // the same GPU as before
  for (const char* bad : {"-1", "70000", "7.9"}) {
    SCOPED_TRACE(bad);
    EXPECT_THROW(
        ParseScenarioText(
            std::string(
                R"({"name": "g", "jobs": [{"name": "j", "ps": 1, "workers": 1}],
                "faults": [{"kind": "gpu", "pod": "j-worker-0", "xid": )") +
            bad + "}]}"),
        ScenarioError);
  }
}

TEST(FaultsTest, BandwidthAnnotationQuantity) {
  EXPECT_EQ(BandwidthQuantity(20), "20M");
  EXPECT_EQ(BandwidthQuantity(2.5), "2500k");
  EXPECT_EQ(BandwidthQuantity(0.1), "100k");
}

}  // namespace
}  // namespace trainsim

namespace trainsim {
namespace {

TEST(FaultLineTest, ParsesOrdersAndRejectsBadLines) {
  FaultOrder o = ParseFaultLine("3 blocked_io /run/x/hungfs/p/data");
  EXPECT_EQ(o.id, 3);
  EXPECT_EQ(o.action, "blocked_io");
  EXPECT_EQ(o.arg, "/run/x/hungfs/p/data");
  o = ParseFaultLine("7 checkpoint 1000 /var/tmp/c");
  EXPECT_EQ(o.arg, "1000");
  EXPECT_EQ(o.path, "/var/tmp/c");
  EXPECT_EQ(ParseFaultLine("1 busy_loop").action, "busy_loop");
  EXPECT_EQ(ParseFaultLine("2 all_wait").action, "all_wait");
  o = ParseFaultLine("8 oom 671088640");
  EXPECT_EQ(o.action, "oom");
  EXPECT_EQ(o.arg, "671088640");
  for (const char* bad :
       {"", "busy_loop", "0 busy_loop", "-1 all_wait", "4 sigstop",
        "5 blocked_io", "6 checkpoint 10", "9 oom"})
    EXPECT_EQ(ParseFaultLine(bad).id, 0) << bad;
}

// A temp dir removed even when a test fails.
class FaultGateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/fault_gate_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string dir_;
};

TEST_F(FaultGateTest, HangLastsWhileTheOrderStaysAndNoLonger) {
  for (const char* action : {"busy_loop", "all_wait"}) {
    const std::string file = dir_ + "/pod";
    WriteFaultFile(file, {1, action, "", ""});
    FaultGate gate(file);
    StopState stop;
    std::atomic<bool> returned{false};
    std::thread t([&] {
      gate.AtStepBoundary(stop);
      returned = true;
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(600));
    EXPECT_FALSE(returned) << action << " returned while ordered";
    RemoveFaultFile(file);
    const auto t0 = std::chrono::steady_clock::now();
    t.join();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3))
        << action;
  }
}

TEST_F(FaultGateTest, CheckpointWritesOnceAndDeletesItsFile) {
  const std::string file = dir_ + "/pod", ckpt = dir_ + "/pod.checkpoint";
  WriteFaultFile(file, {4, "checkpoint", "3000000", ckpt});
  FaultGate gate(file);
  StopState stop;
  gate.AtStepBoundary(stop);
  EXPECT_FALSE(std::filesystem::exists(ckpt));
  // Once per order: a later step with the same line leaves this file alone
  // (a second checkpoint would truncate and delete it).
  { std::ofstream(ckpt) << "marker"; }
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  gate.AtStepBoundary(stop);
  EXPECT_TRUE(std::filesystem::exists(ckpt));
  std::filesystem::remove(ckpt);
  EXPECT_FALSE(std::filesystem::exists(ckpt));
}

}  // namespace
}  // namespace trainsim
