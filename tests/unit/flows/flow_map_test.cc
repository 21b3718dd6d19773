#include "flows/flow_map.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <cstring>
#include <vector>

namespace trainscope {
namespace {

FlowKey Key(uint64_t cg, const char* peer, uint16_t lport, uint16_t pport,
            FlowDirection dir, uint8_t proto = 6) {
  FlowKey k;
  k.pod.cgroup_id = cg;
  k.peer = *IpAddress::Parse(peer);
  k.local_port = lport;
  k.peer_port = pport;
  k.direction = dir;
  k.protocol = proto;
  return k;
}

TEST(FlowKeyLayout, MatchesTheBpfSide) {
  // The BPF program writes these offsets; a change here is a wire break.
  EXPECT_EQ(sizeof(peer_flow_key), 32u);
  EXPECT_EQ(offsetof(peer_flow_key, pod_cgroup_id), 0u);
  EXPECT_EQ(offsetof(peer_flow_key, peer_addr), 8u);
  EXPECT_EQ(offsetof(peer_flow_key, local_port), 24u);
  EXPECT_EQ(offsetof(peer_flow_key, peer_port), 26u);
  EXPECT_EQ(offsetof(peer_flow_key, direction), 28u);
  EXPECT_EQ(offsetof(peer_flow_key, protocol), 29u);
  EXPECT_EQ(sizeof(peer_flow_value), 24u);
}

TEST(FlowKeyPacking, RoundTripsAndMapsV4AsTheKernelDoes) {
  struct Case {
    FlowKey key;
    std::vector<uint8_t> addr;  // expected peer_addr bytes
  };
  const std::vector<Case> cases = {
      {Key(1234, "198.18.0.7", 2222, 40000, FlowDirection::kReceive),
       {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 198, 18, 0, 7}},
      {Key(~0ull, "fd00::1", 40000, 2222, FlowDirection::kTransmit, 17),
       {0xfd, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}},
      {Key(1, "0.0.0.0", 0, 0, FlowDirection::kTransmit, 1),
       {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0}},
  };
  for (const auto& c : cases) {
    peer_flow_key raw = PackFlowKey(c.key);
    EXPECT_EQ(raw.pod_cgroup_id, c.key.pod.cgroup_id);
    EXPECT_EQ(std::vector<uint8_t>(raw.peer_addr, raw.peer_addr + 16), c.addr);
    EXPECT_EQ(raw.local_port, c.key.local_port);
    EXPECT_EQ(raw.peer_port, c.key.peer_port);
    EXPECT_EQ(raw.direction, c.key.direction == FlowDirection::kTransmit
                                 ? PEER_FLOWS_TRANSMIT
                                 : PEER_FLOWS_RECEIVE);
    EXPECT_EQ(raw.pad[0], 0);
    EXPECT_EQ(raw.pad[1], 0);
    EXPECT_EQ(UnpackFlowKey(raw), c.key) << c.key.peer.ToString();
  }
}

TEST(SumPerCpu, AddsEverySlotAtTheKernelStride) {
  const size_t stride = 24, cpus = 3;
  std::vector<unsigned char> buf(stride * cpus);
  for (size_t cpu = 0; cpu < cpus; ++cpu) {
    peer_flow_value v{100 * (cpu + 1), 90 * (cpu + 1), cpu + 1};
    std::memcpy(buf.data() + cpu * stride, &v, sizeof v);
  }
  FlowCounters sum = SumPerCpu(buf.data(), cpus, stride);
  EXPECT_EQ(sum, (FlowCounters{600, 540, 6}));
  EXPECT_EQ(SumPerCpu(buf.data(), 0, stride), FlowCounters{});
}

TEST(CounterTracker, DeltasStayNonNegativeAcrossEvictions) {
  const FlowKey a = Key(1, "198.18.0.2", 2222, 5000, FlowDirection::kReceive);
  const FlowKey b = Key(1, "198.18.0.3", 2222, 5001, FlowDirection::kTransmit);
  struct Step {
    std::vector<std::pair<FlowKey, FlowCounters>> map;
    std::vector<FlowDelta> want;
    uint64_t resets;
  };
  const std::vector<Step> steps = {
      // First sight: everything so far is new.
      {{{a, {1000, 900, 10}}}, {{a, {1000, 900, 10}}}, 0},
      // Growth: only the increase.
      {{{a, {1500, 1300, 14}}, {b, {10, 0, 1}}},
       {{a, {500, 400, 4}}, {b, {10, 0, 1}}},
       0},
      // No change: no delta.
      {{{a, {1500, 1300, 14}}, {b, {10, 0, 1}}}, {}, 0},
      // a evicted and re-created: its new value is all new traffic.
      {{{a, {200, 150, 2}}, {b, {10, 0, 1}}}, {{a, {200, 150, 2}}}, 1},
      // b evicted and not back: forgotten, then counted from 0 again.
      {{{a, {200, 150, 2}}}, {}, 1},
      {{{b, {5, 0, 1}}}, {{b, {5, 0, 1}}}, 1},
  };
  CounterTracker tracker;
  for (size_t i = 0; i < steps.size(); ++i) {
    auto got = tracker.Update(steps[i].map);
    ASSERT_EQ(got.size(), steps[i].want.size()) << "step " << i;
    for (size_t j = 0; j < got.size(); ++j) {
      EXPECT_EQ(got[j].key, steps[i].want[j].key) << "step " << i;
      EXPECT_EQ(got[j].counters, steps[i].want[j].counters) << "step " << i;
    }
    EXPECT_EQ(tracker.resets(), steps[i].resets) << "step " << i;
    EXPECT_EQ(tracker.tracked(), steps[i].map.size());
  }
}

TEST(IpAddress, ParsesPrintsAndClassifies) {
  struct Case {
    const char* text;
    bool ok;
    bool v4;
    const char* printed;
  };
  const Case cases[] = {{"198.18.0.1", true, true, "198.18.0.1"},
                        {"::ffff:198.18.0.1", true, true, "198.18.0.1"},
                        {"fd00::a", true, false, "fd00::a"},
                        {"198.18.0", false, false, ""},
                        {"", false, false, ""}};
  for (const auto& c : cases) {
    auto a = IpAddress::Parse(c.text);
    ASSERT_EQ(a.has_value(), c.ok) << c.text;
    if (!a) continue;
    EXPECT_EQ(a->is_v4(), c.v4) << c.text;
    EXPECT_EQ(a->ToString(), c.printed);
  }
  EXPECT_TRUE(IpAddress{}.is_unspecified());
}

}  // namespace
}  // namespace trainscope
