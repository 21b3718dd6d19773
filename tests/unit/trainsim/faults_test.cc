#include "faults.h"

#include <gtest/gtest.h>

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

TEST(FaultsTest, BandwidthAnnotationQuantity) {
  EXPECT_EQ(BandwidthQuantity(20), "20M");
  EXPECT_EQ(BandwidthQuantity(2.5), "2500k");
  EXPECT_EQ(BandwidthQuantity(0.1), "100k");
}

}  // namespace
}  // namespace trainsim
