// Exchange bursts from the real kernel: the BPF programs keep the burst in
// progress on each socket and report each connection's piece; user space
// joins a peer's connections into one exchange per step (AddToTrain). A
// step sent over three connections must come out as one burst a step, the
// last one included (the connection's FIN reports it: nothing else would).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <thread>

#include "bpf_pod_pair.h"
#include "flows/bpf_loader.h"
#include "flows/step_period.h"
#include "flows_lab.h"
#include "kernel_pod.h"

namespace trainscope::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kConnections = 3;
constexpr int kSteps = 10;
constexpr double kPeriodS = 0.5;
constexpr int kBytesPerConnection = 200'000;
// Wider than the agent's default 20 ms: on a loaded machine (the sanitizer
// suite) a sender may stall that long between its connections' pieces.
constexpr double kGapS = 0.1;

// Sends kBytesPerConnection on each connection every kPeriodS, kSteps
// times, then closes them.
constexpr const char* kSender = R"(
import socket, sys, time
ip, port, conns, steps, period, size = sys.argv[1], int(sys.argv[2]), \
    int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
socks = [socket.create_connection((ip, port), timeout=5) for _ in range(conns)]
payload = b"x" * size
t0 = time.monotonic() + 0.3
for k in range(steps):
    time.sleep(max(0.0, t0 + k * period - time.monotonic()))
    for s in socks:
        s.sendall(payload)
time.sleep(0.2)
for s in socks:
    s.close()
)";

// Accepts `conns` connections and reads each to its end.
constexpr const char* kReceiver = R"(
import socket, sys, threading
ip, port, conns = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((ip, port))
srv.listen(conns)
srv.settimeout(15)
def drain(c):
    c.settimeout(15)
    while c.recv(1 << 16):
        pass
    c.close()
threads = []
for _ in range(conns):
    c, _ = srv.accept()
    t = threading.Thread(target=drain, args=(c,))
    t.start()
    threads.append(t)
for t in threads:
    t.join()
)";

struct Joined {
  size_t pieces = 0;
  std::deque<BurstPoint> train;
};

Joined JoinedBursts(const std::vector<BurstEvent>& events, uint64_t pod,
                    FlowDirection direction) {
  Joined out;
  for (const BurstEvent& e : events) {
    if (e.pod.cgroup_id != pod || e.direction != direction) continue;
    ++out.pieces;
    AddToTrain(&out.train, {e.start_s, e.payload_bytes, e.end_s}, kGapS);
  }
  return out;
}

void ExpectOneBurstAStep(const Joined& joined, const char* side) {
  SCOPED_TRACE(side);
  // Each connection reports its own piece of a step.
  EXPECT_GE(joined.pieces, static_cast<size_t>(kSteps * kConnections));
  ASSERT_EQ(joined.train.size(), static_cast<size_t>(kSteps));
  for (size_t i = 0; i < joined.train.size(); ++i) {
    const BurstPoint& b = joined.train[i];
    EXPECT_EQ(b.bytes,
              static_cast<uint64_t>(kConnections) * kBytesPerConnection)
        << "step " << i;
    if (i > 0) {
      EXPECT_NEAR(b.start_s - joined.train[i - 1].start_s, kPeriodS, 0.15)
          << "step " << i;
    }
  }
}

TEST(FlowsBurstsTest, AStepOverSeveralConnectionsIsOneBurstAStep) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  if (!Sh("command -v python3")) GTEST_SKIP() << "python3 missing";
  NetnsLab lab(2);
  BpfPodPair pods;
  ASSERT_TRUE(pods.found());
  Status error = Status::Ok();
  auto bpf = pods.Attach(static_cast<uint64_t>(kGapS * 1e9), &error);
  ASSERT_TRUE(bpf) << error.message();
  ASSERT_TRUE(bpf->SetPods(pods.both()).ok());

  const std::string dir = ::testing::TempDir();
  const int port = 5301;
  PodProcess receiver(pods.b, lab.netns(1),
                      {"python3", "-c", kReceiver, lab.ip(1),
                       std::to_string(port), std::to_string(kConnections)},
                      dir + "/bursts-receiver.log");
  ASSERT_TRUE(WaitListening(receiver.pid(), port, 10s))
      << Slurp(dir + "/bursts-receiver.log");
  PodProcess sender(
      pods.a, lab.netns(0),
      {"python3", "-c", kSender, lab.ip(1), std::to_string(port),
       std::to_string(kConnections), std::to_string(kSteps),
       std::to_string(kPeriodS), std::to_string(kBytesPerConnection)},
      dir + "/bursts-sender.log");
  EXPECT_EQ(sender.Wait(20s), std::optional<int>(0))
      << Slurp(dir + "/bursts-sender.log");
  EXPECT_EQ(receiver.Wait(10s), std::optional<int>(0))
      << Slurp(dir + "/bursts-receiver.log");

  std::vector<BurstEvent> events;
  ASSERT_TRUE(bpf->DrainBursts(&events).ok());
  EXPECT_EQ(bpf->stats().burst_events_lost, 0u);
  ExpectOneBurstAStep(JoinedBursts(events, pods.a_id, FlowDirection::kTransmit),
                      "sender");
  ExpectOneBurstAStep(JoinedBursts(events, pods.b_id, FlowDirection::kReceive),
                      "receiver");
}

}  // namespace
}  // namespace trainscope::testing
