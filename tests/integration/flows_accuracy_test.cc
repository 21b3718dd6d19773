// Privileged: per-peer bytes from the real agent against iperf3's own count,
// between two network-namespace pods in kubelet-style cgroups, for both byte
// directions (iperf3 -R is the receiver-pull pattern: the bytes flow against
// the connection's direction), in eBPF and in pcap mode.
//
// iperf3 counts TCP payload. The agent exports IP-level bytes
// (trainscope_peer_*_bytes_total) and payload bytes
// (trainscope_peer_*_payload_bytes_total). Payload must match within 2%; the
// IP-level header overhead is printed and must stay small because GSO/GRO
// aggregates on veth carry many segments per header.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent_process.h"
#include "flows_lab.h"
#include "kernel_pod.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

nlohmann::json PodJson(const KernelPod& pod, const std::string& name,
                       const std::string& role, const std::string& ip) {
  return {{"metadata",
           {{"name", name},
            {"namespace", "flows-test"},
            {"uid", pod.uid()},
            {"labels",
             {{"training.kubeflow.org/job-name", "acc"},
              {"training.kubeflow.org/replica-type", role},
              {"training.kubeflow.org/replica-index", "0"}}}}},
          {"spec",
           {{"nodeName", "node-a"},
            {"containers", {{{"name", "main"}, {"image", "iperf3"}}}}}},
          {"status",
           {{"phase", "Running"},
            {"podIP", ip},
            {"podIPs", {{{"ip", ip}}}},
            {"containerStatuses",
             {{{"name", "main"},
               {"containerID", "containerd://" + pod.container_id()}}}}}}};
}

class FlowsAccuracyTest : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    ASSERT_TRUE(Sh("command -v iperf3")) << "iperf3 is not installed";
    dir_ = fs::temp_directory_path() /
           ("trainscope-flows-acc-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    lab_ = std::make_unique<NetnsLab>(2);
    worker_ = std::make_unique<KernelPod>();
    ps_ = std::make_unique<KernelPod>();
    nlohmann::json list = {
        {"apiVersion", "v1"},
        {"kind", "PodList"},
        {"metadata", {{"resourceVersion", "1"}}},
        {"items",
         {PodJson(*worker_, "acc-worker-0", "worker", lab_->ip(0)),
          PodJson(*ps_, "acc-ps-0", "ps", lab_->ip(1))}}};
    std::ofstream(dir_ / "pods.json") << list.dump(2);
  }
  void TearDown() override {
    agent_.reset();
    ps_.reset();
    worker_.reset();
    lab_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void StartAgent(const std::vector<std::string>& extra) {
    port_ = FreePort();
    std::vector<std::string> args = {
        "--listen",    "127.0.0.1:" + std::to_string(port_),
        "--interval",  "0.5",
        "--node-name", "node-a",
        "--discovery", "file",
        "--pod-file",  (dir_ / "pods.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    agent_ = std::make_unique<AgentProcess>(args);
    ASSERT_TRUE(agent_->WaitHttpOk(port_, "/readyz", 10s)) << agent_->Stderr();
    // Pod cgroups reach the BPF map (and pod addresses the capture) at the
    // next samples; traffic before that is not attributed.
    std::this_thread::sleep_for(1500ms);
  }

  // Runs one bounded iperf3 test from the worker to the PS; returns its JSON.
  nlohmann::json RunIperf(bool reverse) {
    const std::string server_out = (dir_ / "server.json").string();
    const std::string client_out = (dir_ / "client.json").string();
    PodProcess server(*ps_, lab_->netns(1),
                      {"iperf3", "-s", "-1", "-B", lab_->ip(1)}, server_out);
    EXPECT_TRUE(WaitListening(server.pid(), 5201, 10s)) << Slurp(server_out);
    std::vector<std::string> argv = {
        "iperf3", "-c", lab_->ip(1),         "-t",
        "2",      "-J", "--connect-timeout", "3000"};
    if (reverse) argv.push_back("-R");
    PodProcess client(*worker_, lab_->netns(0), argv, client_out);
    auto rc = client.Wait(20s);
    EXPECT_EQ(rc, std::optional<int>(0)) << Slurp(client_out);
    server.Wait(5s);
    return nlohmann::json::parse(Slurp(client_out), nullptr, false);
  }

  // Cumulative counters of one (pod, peer) series.
  struct Peer {
    double bytes = 0, payload = 0, packets = 0;
  };
  Peer Read(const std::string& metrics, const std::string& dir,
            const std::string& pod, const std::string& peer) {
    std::vector<std::string> labels = {"pod=\"" + pod + "\"",
                                       "peer_pod=\"" + peer + "\""};
    Peer p;
    p.bytes =
        MetricValue(metrics, "trainscope_peer_" + dir + "_bytes_total", labels)
            .value_or(0);
    p.payload =
        MetricValue(metrics, "trainscope_peer_" + dir + "_payload_bytes_total",
                    labels)
            .value_or(0);
    p.packets = MetricValue(metrics,
                            "trainscope_peer_" + dir + "_packets_total", labels)
                    .value_or(0);
    return p;
  }

  void CheckDirection(bool reverse) {
    auto before = HttpGet(port_, "/metrics");
    ASSERT_TRUE(before);
    nlohmann::json result = RunIperf(reverse);
    ASSERT_FALSE(result.is_discarded());
    ASSERT_TRUE(result.contains("end")) << result.dump();
    const double sent = result["end"]["sum_sent"]["bytes"].get<double>();
    const double received =
        result["end"]["sum_received"]["bytes"].get<double>();
    ASSERT_GT(sent, 1e6);
    std::this_thread::sleep_for(1500ms);  // two more samples
    auto after = HttpGet(port_, "/metrics");
    ASSERT_TRUE(after);

    // The data sender and receiver: the worker opened the connection, but
    // with -R the PS sends.
    const std::string sender = reverse ? "acc-ps-0" : "acc-worker-0";
    const std::string receiver = reverse ? "acc-worker-0" : "acc-ps-0";
    auto delta = [&](const std::string& dir, const std::string& pod,
                     const std::string& peer) {
      Peer a = Read(*before, dir, pod, peer), b = Read(*after, dir, pod, peer);
      return Peer{b.bytes - a.bytes, b.payload - a.payload,
                  b.packets - a.packets};
    };
    Peer tx = delta("transmit", sender, receiver);
    Peer rx = delta("receive", receiver, sender);
    const char* mode = GetParam().c_str();
    std::cout << mode << (reverse ? " -R" : "") << ": iperf3 sent " << sent
              << " received " << received << "; agent tx payload " << tx.payload
              << " (" << (tx.payload / sent - 1) * 100 << "%), IP bytes "
              << tx.bytes << " (header overhead "
              << (tx.bytes / tx.payload - 1) * 100 << "%, " << tx.packets
              << " pkts); rx payload " << rx.payload << " ("
              << (rx.payload / received - 1) * 100 << "%), IP bytes "
              << rx.bytes << "\n";
    RecordProperty(
        std::string(reverse ? "reverse_" : "forward_") + "tx_error_pct",
        std::to_string((tx.payload / sent - 1) * 100));
    EXPECT_NEAR(tx.payload, sent, 0.02 * sent) << *after;
    EXPECT_NEAR(rx.payload, received, 0.02 * received) << *after;
    // IP-level bytes carry headers on top of the payload, never less.
    EXPECT_GE(tx.bytes, tx.payload);
    EXPECT_NEAR(tx.bytes, sent, 0.05 * sent);
    EXPECT_NEAR(rx.bytes, received, 0.05 * received);
  }

  fs::path dir_;
  std::unique_ptr<NetnsLab> lab_;
  std::unique_ptr<KernelPod> worker_, ps_;
  std::unique_ptr<AgentProcess> agent_;
  int port_ = 0;
};

TEST_P(FlowsAccuracyTest, PeerBytesMatchIperf3BothDirections) {
  if (GetParam() == "ebpf") {
    StartAgent({"--flows", "ebpf"});
  } else {
    // "any" sees each packet on both host-side veths: deduplication by
    // ifindex is part of what is tested.
    StartAgent({"--flows", "pcap", "--pcap-interfaces", "any",
                "--training-ports", "5201"});
  }
  auto metrics = HttpGet(port_, "/metrics");
  ASSERT_TRUE(metrics);
  ASSERT_TRUE(MetricValue(*metrics, "trainscope_flows_mode",
                          {"mode=\"" + GetParam() + "\""}))
      << *metrics << agent_->Stderr();
  CheckDirection(/*reverse=*/false);
  CheckDirection(/*reverse=*/true);

  // One worker and one PS on this node: while they exchange, the PS carries
  // the whole share. The share covers the diagnosis window (a few samples),
  // so it is read while traffic flows, not after.
  std::optional<double> share;
  std::string last;
  std::thread traffic([&] { RunIperf(/*reverse=*/false); });
  for (int i = 0; i < 50 && share != std::optional<double>(1.0); ++i) {
    std::this_thread::sleep_for(100ms);
    if (auto m = HttpGet(port_, "/metrics")) {
      last = *m;
      share = MetricValue(last, "trainscope_ps_traffic_share_ratio",
                          {"pod=\"acc-ps-0\""});
    }
  }
  traffic.join();
  EXPECT_EQ(share, std::optional<double>(1.0)) << last;
}

INSTANTIATE_TEST_SUITE_P(Modes, FlowsAccuracyTest,
                         ::testing::Values("ebpf", "pcap"));

// A Guaranteed pod's cgroup sits one level above a Burstable pod's: the BPF
// program must find both at their own depth.
TEST(FlowsQosDepthTest, GuaranteedAndBurstablePodsAreBothAttributed) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  ASSERT_TRUE(Sh("command -v iperf3"));
  const fs::path dir = fs::temp_directory_path() /
                       ("trainscope-flows-qos-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct RemoveDir {
    fs::path p;
    ~RemoveDir() { fs::remove_all(p); }
  } remove_dir{dir};
  NetnsLab lab(2);
  KernelPod worker;    // Burstable
  GuaranteedV2Pod ps;  // Guaranteed
  auto pod = [](const std::string& uid, const std::string& cid,
                const std::string& name, const std::string& role,
                const std::string& ip) {
    return nlohmann::json{
        {"metadata",
         {{"name", name},
          {"namespace", "flows-test"},
          {"uid", uid},
          {"labels",
           {{"training.kubeflow.org/job-name", "qos"},
            {"training.kubeflow.org/replica-type", role}}}}},
        {"spec", {{"nodeName", "node-a"}, {"containers", {{{"name", "m"}}}}}},
        {"status",
         {{"phase", "Running"},
          {"podIP", ip},
          {"containerStatuses",
           {{{"name", "m"}, {"containerID", "containerd://" + cid}}}}}}};
  };
  nlohmann::json list = {
      {"apiVersion", "v1"},
      {"kind", "PodList"},
      {"metadata", {{"resourceVersion", "1"}}},
      {"items",
       {pod(worker.uid(), worker.container_id(), "qos-worker-0", "worker",
            lab.ip(0)),
        pod(ps.uid(), ps.container_id(), "qos-ps-0", "ps", lab.ip(1))}}};
  std::ofstream(dir / "pods.json") << list.dump();
  const int port = FreePort();
  AgentProcess agent({"--listen", "127.0.0.1:" + std::to_string(port),
                      "--interval", "0.5", "--node-name", "node-a",
                      "--discovery", "file", "--pod-file",
                      (dir / "pods.json").string()});
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
  std::this_thread::sleep_for(1500ms);
  {
    // Loopback inside a pod is no traffic between pods: never counted.
    PodProcess server(worker, lab.netns(0),
                      {"iperf3", "-s", "-1", "-B", "127.0.0.1", "-p", "5202"},
                      (dir / "lo-s.log").string());
    ASSERT_TRUE(WaitListening(server.pid(), 5202, 10s))
        << Slurp((dir / "lo-s.log").string());
    PodProcess client(worker, lab.netns(0),
                      {"iperf3", "-c", "127.0.0.1", "-p", "5202", "-t", "1",
                       "--connect-timeout", "3000"},
                      (dir / "lo-c.log").string());
    ASSERT_EQ(client.Wait(20s), std::optional<int>(0));
    server.Wait(5s);
  }
  nlohmann::json result;
  {
    PodProcess server([&ps](pid_t pid) { ps.MoveIn(pid); }, lab.netns(1),
                      {"iperf3", "-s", "-1", "-B", lab.ip(1)},
                      (dir / "s.json").string());
    ASSERT_TRUE(WaitListening(server.pid(), 5201, 10s))
        << Slurp((dir / "s.json").string());
    PodProcess client(worker, lab.netns(0),
                      {"iperf3", "-c", lab.ip(1), "-t", "1", "-J",
                       "--connect-timeout", "3000"},
                      (dir / "c.json").string());
    ASSERT_EQ(client.Wait(20s), std::optional<int>(0));
    server.Wait(5s);
    result = nlohmann::json::parse(Slurp((dir / "c.json").string()));
  }
  std::this_thread::sleep_for(1500ms);
  auto m = HttpGet(port, "/metrics");
  ASSERT_TRUE(m);
  const double sent = result["end"]["sum_sent"]["bytes"].get<double>();
  auto tx = MetricValue(*m, "trainscope_peer_transmit_payload_bytes_total",
                        {"pod=\"qos-worker-0\"", "peer_pod=\"qos-ps-0\""});
  auto rx = MetricValue(*m, "trainscope_peer_receive_payload_bytes_total",
                        {"pod=\"qos-ps-0\"", "peer_pod=\"qos-worker-0\""});
  ASSERT_TRUE(tx && rx) << *m << agent.Stderr();
  EXPECT_NEAR(*tx, sent, 0.02 * sent);
  EXPECT_NEAR(*rx, sent, 0.02 * sent);
  for (const char* metric : {"trainscope_peer_receive_bytes_total",
                             "trainscope_peer_transmit_bytes_total"}) {
    EXPECT_LT(MetricValue(*m, metric, {"pod=\"qos-worker-0\"", "peer_pod=\"\""})
                  .value_or(0),
              1e6)
        << metric << " counted loopback traffic\n"
        << *m;
  }
}

}  // namespace
}  // namespace trainscope::testing
