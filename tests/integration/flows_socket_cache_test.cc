// The BPF program caches each socket's pod on the socket (socket_states) and
// trusts the cache only while the pod table is unchanged: a connection that
// was open before its pod was known must be counted once it is, and stop
// being counted once its pod left.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <thread>

#include "bpf_pod_pair.h"
#include "flows/bpf_loader.h"
#include "flows_lab.h"
#include "kernel_pod.h"

namespace trainscope::testing {
namespace {

using namespace std::chrono_literals;

// Bytes the pod sent, summed over its flows; empty when it has none.
std::optional<uint64_t> SentBy(PeerFlowsBpf& bpf, uint64_t pod) {
  std::map<FlowKey, FlowCounters> flows;
  if (!bpf.Drain(&flows).ok()) return std::nullopt;
  std::optional<uint64_t> sent;
  for (const auto& [key, counters] : flows) {
    if (key.pod.cgroup_id != pod) continue;
    if (key.direction != FlowDirection::kTransmit) continue;
    sent = sent.value_or(0) + counters.bytes;
  }
  return sent;
}

TEST(FlowsSocketCacheTest, AnOpenConnectionFollowsItsPodInAndOut) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  if (!Sh("command -v iperf3")) GTEST_SKIP() << "iperf3 missing";
  NetnsLab lab(2);
  BpfPodPair pods;
  ASSERT_TRUE(pods.found());
  const KernelPod &a = pods.a, &b = pods.b;
  const uint64_t a_id = pods.a_id, b_id = pods.b_id;
  Status error = Status::Ok();
  auto bpf = pods.Attach(0, &error);
  ASSERT_TRUE(bpf) << error.message();
  ASSERT_TRUE(bpf->SetPods({}).ok());

  const std::string dir = ::testing::TempDir();
  PodProcess server(b, lab.netns(1), {"iperf3", "-s", "-1", "-B", lab.ip(1)},
                    dir + "/cache-server.log");
  ASSERT_TRUE(WaitListening(server.pid(), 5201, 10s))
      << Slurp(dir + "/cache-server.log");
  // One connection for the whole test, at a steady 8 Mbit/s.
  PodProcess client(a, lab.netns(0),
                    {"iperf3", "-c", lab.ip(1), "-t", "8", "-b", "8M",
                     "--connect-timeout", "3000"},
                    dir + "/cache-client.log");
  std::this_thread::sleep_for(1500ms);
  // Unknown pod: its socket caches "no pod".
  EXPECT_FALSE(SentBy(*bpf, a_id));

  ASSERT_TRUE(bpf->SetPods(pods.both()).ok());
  std::this_thread::sleep_for(1500ms);
  const auto after_join = SentBy(*bpf, a_id);
  ASSERT_TRUE(after_join) << "the open connection was not counted once its "
                             "pod was known";
  // 1.5 s at 8 Mbit/s is 1.5 MB; at least a third of it.
  EXPECT_GT(*after_join, 500'000u);

  ASSERT_TRUE(bpf->SetPods({{b_id, pods.depth}}).ok());
  SentBy(*bpf, a_id);  // the last bytes, then its entries go
  bpf->ForgetDepartedPods();
  std::this_thread::sleep_for(1500ms);
  EXPECT_FALSE(SentBy(*bpf, a_id)) << "a departed pod's socket still counts";

  EXPECT_EQ(client.Wait(15s), std::optional<int>(0))
      << Slurp(dir + "/cache-client.log");
  server.Wait(5s);
}

}  // namespace
}  // namespace trainscope::testing
