// Privileged: the flows collector's failure paths with the real agent. Each
// case must leave a clear log line and an agent that still serves.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "agent_process.h"
#include "flows_lab.h"
#include "kernel_pod.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// IDs of loaded BPF programs named peer_flows_*.
std::set<int> PeerFlowsProgIds() {
  std::set<int> ids;
  auto progs =
      nlohmann::json::parse(ShOut("bpftool -j prog show"), nullptr, false);
  if (!progs.is_array()) return ids;
  for (const auto& p : progs) {
    if (p.value("name", "").rfind("peer_flows", 0) == 0) {
      ids.insert(p["id"].get<int>());
    }
  }
  return ids;
}

class FlowsFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    dir_ = fs::temp_directory_path() /
           ("trainscope-flows-fail-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    WritePods({});
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  void WritePods(const std::vector<nlohmann::json>& items) {
    nlohmann::json list = {{"apiVersion", "v1"},
                           {"kind", "PodList"},
                           {"metadata", {{"resourceVersion", "1"}}},
                           {"items", items}};
    std::ofstream(dir_ / "pods.json") << list.dump();
  }

  std::vector<std::string> Args(int port) const {
    return {"--listen",    "127.0.0.1:" + std::to_string(port),
            "--interval",  "0.5",
            "--node-name", "node-a",
            "--discovery", "file",
            "--pod-file",  (dir_ / "pods.json").string()};
  }

  // Waits for a scrape that satisfies `pred`.
  std::string WaitMetrics(int port,
                          const std::function<bool(const std::string&)>& pred) {
    std::string last;
    for (int i = 0; i < 40; ++i) {
      if (auto m = HttpGet(port, "/metrics")) {
        last = *m;
        if (pred(last)) return last;
      }
      std::this_thread::sleep_for(250ms);
    }
    return last;
  }

  static bool Has(const std::string& text, const std::string& what) {
    return text.find(what) != std::string::npos;
  }

  fs::path dir_;
};

TEST_F(FlowsFailureTest, NoCgroup2FallsBackToPcapAndSaysWhy) {
  const int port = FreePort();
  auto args = Args(port);
  args.insert(args.end(),
              {"--cgroup2-path", dir_.string(), "--pcap-interfaces", "lo"});
  AgentProcess agent(args);
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
  auto m = WaitMetrics(port, [](const std::string& t) {
    return Has(t, "trainscope_flows_mode{mode=\"pcap\"} 1");
  });
  EXPECT_TRUE(Has(m, "trainscope_flows_mode{mode=\"pcap\"} 1")) << m;
  EXPECT_TRUE(Has(m, "trainscope_collector_up{collector=\"flows\"} 1")) << m;
  EXPECT_TRUE(Has(m, "trainscope_flows_pcap_kernel_drops_total 0")) << m;
  const std::string log = agent.Stderr();
  EXPECT_TRUE(Has(log, "[flows] eBPF unavailable: --cgroup2-path " +
                           dir_.string() +
                           " is not a cgroup v2 mount; "
                           "falling back to libpcap"))
      << log;
}

TEST_F(FlowsFailureTest, NothingToCaptureEitherMeansCollectorDownAgentServing) {
  const int port = FreePort();
  auto args = Args(port);
  args.insert(args.end(), {"--cgroup2-path", dir_.string(), "--pcap-interfaces",
                           "tsfnoexist0"});
  AgentProcess agent(args);
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
  auto m = WaitMetrics(port, [](const std::string& t) {
    return Has(t, "trainscope_collector_up{collector=\"flows\"} 0");
  });
  EXPECT_TRUE(Has(m, "trainscope_collector_up{collector=\"flows\"} 0")) << m;
  EXPECT_TRUE(Has(m, "trainscope_collector_up{collector=\"cgroup\"}")) << m;
  EXPECT_TRUE(Has(agent.Stderr(),
                  "libpcap fallback failed (pcap on "
                  "tsfnoexist0"))
      << agent.Stderr();
}

TEST_F(FlowsFailureTest, BpfNotPermittedFallsBackToPcap) {
  if (!Sh("command -v capsh")) GTEST_SKIP() << "capsh (libcap2-bin) missing";
  const int port = FreePort();
  std::string cmd = std::string("exec ") + TRAINSCOPE_AGENT_BIN;
  for (const auto& a : Args(port)) cmd += " '" + a + "'";
  cmd += " --pcap-interfaces lo";
  // Root without CAP_BPF, CAP_SYS_ADMIN and CAP_PERFMON: loading fails with
  // EPERM; CAP_NET_RAW stays, so the capture works.
  ChildProcess agent(
      {"capsh", "--drop=cap_bpf,cap_sys_admin,cap_perfmon", "--", "-c", cmd},
      (dir_ / "agent.log").string());
  std::string m;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(250ms);
    auto got = HttpGet(port, "/metrics");
    if (got && Has(*got, "trainscope_flows_mode")) {
      m = *got;
      break;
    }
  }
  const std::string log = Slurp((dir_ / "agent.log").string());
  EXPECT_TRUE(Has(m, "trainscope_flows_mode{mode=\"pcap\"} 1")) << m << log;
  EXPECT_TRUE(Has(log,
                  "[flows] eBPF unavailable: loading the BPF programs "
                  "failed: Operation not permitted"))
      << log;
  agent.Signal(SIGTERM);
  EXPECT_EQ(agent.Wait(10s), std::optional<int>(0));
}

TEST_F(FlowsFailureTest, InterfaceVanishingDuringCaptureIsReported) {
  NetnsLab lab(1);
  const int port = FreePort();
  auto args = Args(port);
  args.insert(args.end(),
              {"--flows", "pcap", "--pcap-interfaces", lab.host_veth(0)});
  AgentProcess agent(args);
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
  auto m = WaitMetrics(port, [](const std::string& t) {
    return Has(t, "trainscope_collector_up{collector=\"flows\"} 1");
  });
  ASSERT_TRUE(Has(m, "trainscope_collector_up{collector=\"flows\"} 1")) << m;
  ASSERT_TRUE(Sh("ip link del " + lab.host_veth(0)));
  m = WaitMetrics(port, [](const std::string& t) {
    return Has(t, "trainscope_collector_up{collector=\"flows\"} 0");
  });
  EXPECT_TRUE(Has(m, "trainscope_collector_up{collector=\"flows\"} 0")) << m;
  EXPECT_TRUE(Has(agent.Stderr(),
                  "[flows] capture on " + lab.host_veth(0) + " stopped"))
      << agent.Stderr();
  int status = 0;
  EXPECT_TRUE(HttpGet(port, "/healthz", &status));
  EXPECT_EQ(status, 200);
}

TEST_F(FlowsFailureTest, TinyMapEvictsCountsEvictionsAndKeepsGoing) {
  if (!Sh("command -v iperf3")) GTEST_SKIP() << "iperf3 missing";
  NetnsLab lab(2);
  KernelPod a, b;
  auto pod = [&](const KernelPod& p, const std::string& name, int i) {
    return nlohmann::json{
        {"metadata",
         {{"name", name}, {"namespace", "flows-test"}, {"uid", p.uid()}}},
        {"spec", {{"nodeName", "node-a"}, {"containers", {{{"name", "m"}}}}}},
        {"status", {{"phase", "Running"}, {"podIP", lab.ip(i)}}}};
  };
  WritePods({pod(a, "map-a", 0), pod(b, "map-b", 1)});
  const int port = FreePort();
  auto args = Args(port);
  // map-a and map-b have no training role: export them anyway.
  args.insert(args.end(), {"--flow-map-entries", "4", "--pod-filter", "all"});
  AgentProcess agent(args);
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
  std::this_thread::sleep_for(1500ms);
  {
    // 8 parallel streams + control: 9 connections x 2 directions x 2 pods.
    PodProcess server(b, lab.netns(1), {"iperf3", "-s", "-1", "-B", lab.ip(1)},
                      (dir_ / "s.log").string());
    ASSERT_TRUE(WaitListening(server.pid(), 5201, 10s))
        << Slurp((dir_ / "s.log").string());
    PodProcess client(a, lab.netns(0),
                      {"iperf3", "-c", lab.ip(1), "-t", "2", "-P", "8",
                       "--connect-timeout", "3000"},
                      (dir_ / "c.log").string());
    ASSERT_EQ(client.Wait(20s), std::optional<int>(0))
        << Slurp((dir_ / "c.log").string());
    server.Wait(5s);
  }
  auto m = WaitMetrics(port, [](const std::string& t) {
    auto v = MetricValue(t, "trainscope_flows_map_evictions_total", {});
    return v && *v > 0;
  });
  auto evictions = MetricValue(m, "trainscope_flows_map_evictions_total", {});
  ASSERT_TRUE(evictions) << m;
  EXPECT_GT(*evictions, 0) << m;
  EXPECT_EQ(MetricValue(m, "trainscope_flows_map_max_entries", {}),
            std::optional<double>(4));
  EXPECT_TRUE(Has(m, "trainscope_collector_up{collector=\"flows\"} 1")) << m;
  // Counters still exist and never go backwards across evictions.
  auto tx1 = MetricValue(m, "trainscope_peer_transmit_bytes_total",
                         {"pod=\"map-a\"", "peer_pod=\"map-b\""});
  ASSERT_TRUE(tx1) << m;
  // Most bytes die with their evicted entries (that is what the counter
  // warns about); some must still arrive.
  EXPECT_GT(*tx1, 0);
  std::this_thread::sleep_for(1000ms);
  auto m2 = HttpGet(port, "/metrics");
  ASSERT_TRUE(m2);
  auto tx2 = MetricValue(*m2, "trainscope_peer_transmit_bytes_total",
                         {"pod=\"map-a\"", "peer_pod=\"map-b\""});
  ASSERT_TRUE(tx2);
  EXPECT_GE(*tx2, *tx1);
}

TEST_F(FlowsFailureTest, NothingStaysAttachedAfterSigkill) {
  const std::set<int> before = PeerFlowsProgIds();
  const int port = FreePort();
  AgentProcess agent(Args(port));
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
  std::set<int> mine;
  for (int i = 0; i < 40 && mine.size() < 2; ++i) {
    std::this_thread::sleep_for(250ms);
    mine.clear();
    for (int id : PeerFlowsProgIds()) {
      if (!before.count(id)) mine.insert(id);
    }
  }
  ASSERT_EQ(mine.size(), 2u) << agent.Stderr();
  ::kill(agent.pid(), SIGKILL);
  agent.WaitExit(5s);
  bool gone = false;
  for (int i = 0; i < 40 && !gone; ++i) {
    std::this_thread::sleep_for(100ms);
    gone = true;
    for (int id : PeerFlowsProgIds()) gone = gone && !mine.count(id);
  }
  EXPECT_TRUE(gone) << "programs of a SIGKILLed agent are still loaded";
}

}  // namespace
}  // namespace trainscope::testing
