// Exchange bursts from the real kernel: the BPF programs keep the burst in
// progress on each socket and report each connection's piece; user space
// joins a peer's connections into one exchange per step (AddToTrain). A
// step sent over three connections must come out as one burst a step, the
// last one included (the connection's FIN reports it: nothing else would).
// A response cut by silences longer than the gap comes as pieces that share
// its connection and turn.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
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

// Retransmitted segments a step may carry on a loaded machine.
constexpr uint64_t kRetransmittedSegmentsAtMost = 4;

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
    // Every byte once, plus any segment TCP sent twice: a retransmission
    // crosses the hook again (the receiver counted 601,448 of 600,000 once,
    // one 1,448-byte segment, under the sanitizer build on two busy cores).
    const uint64_t sent =
        static_cast<uint64_t>(kConnections) * kBytesPerConnection;
    EXPECT_GE(b.bytes, sent) << "step " << i;
    EXPECT_LE(b.bytes, sent + kRetransmittedSegmentsAtMost * 1448)
        << "step " << i;
    if (i > 0) {
      EXPECT_NEAR(b.start_s - joined.train[i - 1].start_s, kPeriodS, 0.15)
          << "step " << i;
    }
  }
}

// Two pods in network namespaces with the programs attached, bursts on.
class FlowsBurstsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    if (!Sh("command -v python3")) GTEST_SKIP() << "python3 missing";
    lab_.emplace(2);
    pods_.emplace();
    ASSERT_TRUE(pods_->found());
    Status error = Status::Ok();
    bpf_ = pods_->Attach(static_cast<uint64_t>(kGapS * 1e9), &error);
    ASSERT_TRUE(bpf_) << error.message();
    ASSERT_TRUE(bpf_->SetPods(pods_->both()).ok());
  }

  std::optional<NetnsLab> lab_;
  std::optional<BpfPodPair> pods_;
  std::unique_ptr<PeerFlowsBpf> bpf_;
};

TEST_F(FlowsBurstsTest, AStepOverSeveralConnectionsIsOneBurstAStep) {
  NetnsLab& lab = *lab_;
  BpfPodPair& pods = *pods_;

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
  ASSERT_TRUE(bpf_->DrainBursts(&events).ok());
  EXPECT_EQ(bpf_->stats().burst_events_lost, 0u);
  ExpectOneBurstAStep(JoinedBursts(events, pods.a_id, FlowDirection::kTransmit),
                      "sender");
  ExpectOneBurstAStep(JoinedBursts(events, pods.b_id, FlowDirection::kReceive),
                      "receiver");
}

// A client that asks for each step's variables with an 8-byte request, and
// a server that answers each with kPieces pieces kPieceGapS apart: a link
// that stalls mid-response, as a saturated uplink does.
constexpr int kRequests = 5;
constexpr int kPieces = 3;
constexpr int kPieceBytes = 100'000;
constexpr double kPieceGapS = 0.3;

constexpr const char* kAsker = R"(
import socket, sys, time
ip, port, steps, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), \
    int(sys.argv[4])
s = socket.create_connection((ip, port), timeout=10)
for k in range(steps):
    s.sendall(b"12345678")
    got = 0
    while got < size:
        chunk = s.recv(1 << 16)
        if not chunk:
            sys.exit("server went away")
        got += len(chunk)
    time.sleep(0.2)
s.close()
)";

constexpr const char* kAnswerer = R"(
import socket, sys, time
ip, port, pieces, piece, gap = sys.argv[1], int(sys.argv[2]), \
    int(sys.argv[3]), int(sys.argv[4]), float(sys.argv[5])
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind((ip, port))
srv.listen(1)
srv.settimeout(15)
c, _ = srv.accept()
c.settimeout(15)
while True:
    req = b""
    while len(req) < 8:
        chunk = c.recv(8 - len(req))
        if not chunk:
            sys.exit(0)
        req += chunk
    for i in range(pieces):
        if i:
            time.sleep(gap)
        c.sendall(b"x" * piece)
)";

// Each side's bursts in `direction`, joined by connection and turn.
std::map<std::tuple<uint16_t, uint16_t, uint32_t>, BurstPoint> ByTurn(
    const std::vector<BurstEvent>& events, uint64_t pod,
    FlowDirection direction) {
  std::map<std::tuple<uint16_t, uint16_t, uint32_t>, BurstPoint> out;
  for (const BurstEvent& e : events) {
    if (e.pod.cgroup_id != pod || e.direction != direction) continue;
    BurstPoint& b = out[{e.local_port, e.peer_port, e.turn}];
    if (b.bytes == 0) b.start_s = e.start_s;
    b.bytes += e.payload_bytes;
  }
  return out;
}

TEST_F(FlowsBurstsTest, AResponsesPiecesShareItsConnectionAndTurn) {
  NetnsLab& lab = *lab_;
  BpfPodPair& pods = *pods_;

  const std::string dir = ::testing::TempDir();
  const int port = 5302;
  PodProcess server(pods.b, lab.netns(1),
                    {"python3", "-c", kAnswerer, lab.ip(1),
                     std::to_string(port), std::to_string(kPieces),
                     std::to_string(kPieceBytes), std::to_string(kPieceGapS)},
                    dir + "/turns-server.log");
  ASSERT_TRUE(WaitListening(server.pid(), port, 10s))
      << Slurp(dir + "/turns-server.log");
  PodProcess client(
      pods.a, lab.netns(0),
      {"python3", "-c", kAsker, lab.ip(1), std::to_string(port),
       std::to_string(kRequests), std::to_string(kPieces * kPieceBytes)},
      dir + "/turns-client.log");
  EXPECT_EQ(client.Wait(20s), std::optional<int>(0))
      << Slurp(dir + "/turns-client.log");
  EXPECT_EQ(server.Wait(10s), std::optional<int>(0))
      << Slurp(dir + "/turns-server.log");

  std::vector<BurstEvent> events;
  ASSERT_TRUE(bpf_->DrainBursts(&events).ok());
  size_t pieces = 0;
  for (const BurstEvent& e : events)
    if (e.pod.cgroup_id == pods.a_id && e.direction == FlowDirection::kReceive)
      ++pieces;
  // The silences cut every response into its pieces ...
  EXPECT_GE(pieces, static_cast<size_t>(kRequests * kPieces));
  // ... and each side's turns join them again: one exchange a request, of
  // the request's response, its turns two apart (the request between).
  for (const auto& [pod, direction, side] :
       {std::tuple{pods.a_id, FlowDirection::kReceive, "client"},
        std::tuple{pods.b_id, FlowDirection::kTransmit, "server"}}) {
    SCOPED_TRACE(side);
    const auto exchanges = ByTurn(events, pod, direction);
    ASSERT_EQ(exchanges.size(), static_cast<size_t>(kRequests));
    uint32_t previous_turn = 0;
    for (const auto& [key, b] : exchanges) {
      const auto& [local_port, peer_port, turn] = key;
      EXPECT_NE(local_port, 0);
      EXPECT_TRUE(local_port == port || peer_port == port);
      EXPECT_EQ(b.bytes, static_cast<uint64_t>(kPieces) * kPieceBytes);
      if (&b != &exchanges.begin()->second) {
        EXPECT_EQ(turn, previous_turn + 2);
      } else {
        EXPECT_EQ(turn, 1u);  // the first request was turn 0
      }
      previous_turn = turn;
    }
  }
}

}  // namespace
}  // namespace trainscope::testing
