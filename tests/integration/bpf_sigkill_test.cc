// Privileged (issue 15, item 4): SIGKILL of the agent while its cgroup_skb
// programs are attached to the real kernel's kubepods cgroup. Afterwards
// neither `bpftool prog show` nor `bpftool cgroup tree` may hold anything of
// that agent, and a restarted agent must attach again and count traffic.
//
// Other agents (the lead's scenario tests) may have their own peer_flows
// programs attached at the same time: everything here is told apart by the
// BPF ids this test's agents created.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
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
using Clock = std::chrono::steady_clock;

// Trainscope's BPF objects are named after the program file (peer_flows.bpf.c):
// programs peer_flows_ingress/_egress, maps peer_flows and pod_cgroups.
bool IsTrainscopeName(const std::string& name) {
  return name.rfind("peer_flows", 0) == 0 || name == "pod_cgroups";
}

std::set<int> TrainscopeIds(const std::string& bpftool_list) {
  return BpfObjectIds(bpftool_list, IsTrainscopeName).value_or(std::set<int>{});
}

// Program ids attached anywhere in the cgroup v2 tree, with their cgroup.
std::map<int, std::string> AttachedProgs() {
  std::map<int, std::string> out;
  auto tree = nlohmann::json::parse(ShOut("bpftool -j cgroup tree"), nullptr,
                                    /*allow=*/false);
  if (!tree.is_array()) return out;
  for (const auto& cg : tree) {
    for (const auto& p : cg.value("programs", nlohmann::json::array())) {
      if (IsTrainscopeName(p.value("name", ""))) {
        out[p["id"].get<int>()] = cg.value("cgroup", "");
      }
    }
  }
  return out;
}

std::set<int> Minus(const std::set<int>& a, const std::set<int>& b) {
  std::set<int> out;
  for (int x : a) {
    if (!b.count(x)) out.insert(x);
  }
  return out;
}

class BpfSigkillTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    if (!Sh("command -v bpftool >/dev/null && command -v iperf3 >/dev/null")) {
      GTEST_SKIP() << "bpftool or iperf3 missing";
    }
    dir_ = fs::temp_directory_path() /
           ("trainscope-bpf-sigkill-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  std::vector<std::string> Args(int port) const {
    return {"--listen",     "127.0.0.1:" + std::to_string(port),
            "--interval",   "0.5",
            "--node-name",  "node-a",
            "--discovery",  "file",
            "--pod-file",   (dir_ / "pods.json").string(),
            "--flows",      "ebpf",
            "--pod-filter", "all"};
  }

  // Waits until two programs that are not in `before` are attached in the
  // cgroup tree; returns their ids.
  static std::set<int> WaitAttached(const std::set<int>& before) {
    std::set<int> mine;
    for (int i = 0; i < 60 && mine.size() < 2; ++i) {
      std::this_thread::sleep_for(250ms);
      mine.clear();
      for (const auto& [id, cgroup] : AttachedProgs()) {
        if (!before.count(id)) mine.insert(id);
      }
    }
    return mine;
  }

  fs::path dir_;
};

TEST_F(BpfSigkillTest, NothingRemainsAfterSigkillAndARestartCountsTraffic) {
  NetnsLab lab(2);
  KernelPod a, b;  // before the agent: it attaches to kubepods.slice
  std::ofstream(dir_ / "pods.json") << nlohmann::json{
      {"apiVersion", "v1"},
      {"kind", "PodList"},
      {"metadata", {{"resourceVersion", "1"}}},
      {"items",
       {KernelPodJson(a, "reliability", "kill-a", lab.ip(0)),
        KernelPodJson(b, "reliability", "kill-b",
                      lab.ip(1))}}}.dump();
  const std::set<int> progs_before = TrainscopeIds("bpftool -j prog show");
  const std::set<int> maps_before = TrainscopeIds("bpftool -j map show");
  std::set<int> attached_before;
  for (const auto& [id, cgroup] : AttachedProgs()) attached_before.insert(id);

  std::set<int> killed_progs, killed_maps;
  {
    const int port = FreePort();
    AgentProcess agent(Args(port));
    ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
    killed_progs = WaitAttached(attached_before);
    ASSERT_EQ(killed_progs.size(), 2u) << agent.Stderr();
    // The positive control: where they are attached and that bpftool lists
    // the programs and maps, so "gone" below means something.
    const auto where = AttachedProgs();
    for (int id : killed_progs) {
      EXPECT_EQ(where.at(id),
                (KernelPod::Unified() / "kubepods.slice").string());
    }
    EXPECT_EQ(Minus(TrainscopeIds("bpftool -j prog show"), progs_before),
              killed_progs);
    killed_maps = Minus(TrainscopeIds("bpftool -j map show"), maps_before);
    EXPECT_EQ(killed_maps.size(), 2u);  // peer_flows, pod_cgroups

    ASSERT_EQ(::kill(agent.pid(), SIGKILL), 0);
    ASSERT_TRUE(agent.WaitExit(5s).has_value());
  }
  // Links are released when the last fd closes; the kernel frees programs
  // and maps after an RCU grace period, so poll briefly.
  const auto killed_at = Clock::now();
  bool gone = false;
  while (!gone && Clock::now() - killed_at < 5s) {
    std::this_thread::sleep_for(20ms);
    std::set<int> attached;
    for (const auto& [id, cgroup] : AttachedProgs()) attached.insert(id);
    gone =
        Minus(killed_progs, attached) == killed_progs &&
        Minus(killed_progs, TrainscopeIds("bpftool -j prog show")) ==
            killed_progs &&
        Minus(killed_maps, TrainscopeIds("bpftool -j map show")) == killed_maps;
  }
  const auto released_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() -
                                                            killed_at)
          .count();
  EXPECT_TRUE(gone) << "programs, attachments or maps of the SIGKILLed agent "
                       "are still in the kernel after 5 s";
  RecordProperty("released_ms", static_cast<int>(released_ms));
  std::printf(
      "[ figure ] SIGKILL -> nothing of the agent in bpftool after "
      "%lld ms\n",
      static_cast<long long>(released_ms));

  // A restarted agent attaches cleanly (no "exists"/"busy" error) and counts.
  const int port = FreePort();
  AgentProcess agent(Args(port));
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
  std::set<int> live_before;
  for (const auto& [id, cgroup] : AttachedProgs()) {
    if (!killed_progs.count(id)) live_before.insert(id);
  }
  std::set<int> restarted;
  for (int i = 0; i < 60 && restarted.size() < 2; ++i) {
    restarted = Minus(TrainscopeIds("bpftool -j prog show"), progs_before);
    std::this_thread::sleep_for(250ms);
  }
  EXPECT_EQ(restarted.size(), 2u) << agent.Stderr();
  WaitSamplerCycles(port, 2);
  {
    PodProcess server(b, lab.netns(1), {"iperf3", "-s", "-1", "-B", lab.ip(1)},
                      (dir_ / "s.log").string());
    ASSERT_TRUE(WaitListening(server.pid(), 5201, 10s))
        << Slurp((dir_ / "s.log").string());
    PodProcess client(a, lab.netns(0), IperfClientArgs(lab.ip(1)),
                      (dir_ / "c.json").string());
    ASSERT_EQ(client.Wait(20s), std::optional<int>(0))
        << Slurp((dir_ / "c.json").string());
    server.Wait(5s);
  }
  const auto received = IperfReceivedBytes(Slurp((dir_ / "c.json").string()));
  ASSERT_TRUE(received) << Slurp((dir_ / "c.json").string());
  ASSERT_GT(*received, 1e6);
  std::optional<double> tx;
  std::string m;
  for (int i = 0; i < 40; ++i) {
    if (auto got = HttpGet(port, "/metrics")) {
      m = *got;
      tx = MetricValue(m, "trainscope_peer_transmit_bytes_total",
                       {"pod=\"kill-a\"", "peer_pod=\"kill-b\""});
      if (tx && *tx >= *received) break;
    }
    std::this_thread::sleep_for(250ms);
  }
  ASSERT_TRUE(tx) << m << agent.Stderr();
  // Wire bytes: the received payload and its headers.
  EXPECT_GE(*tx, *received) << m;
  EXPECT_NE(m.find("trainscope_flows_mode{mode=\"ebpf\"} 1"), std::string::npos)
      << m;
  EXPECT_EQ(agent.Stderr().find("attaching cgroup_skb"), std::string::npos)
      << agent.Stderr();
}

}  // namespace
}  // namespace trainscope::testing
