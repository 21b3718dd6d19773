// Privileged (issue 15, item 5): the real agent under exactly the
// capabilities daemonset/base/daemonset.yaml grants (read from that file),
// as the container gets them: uid 0, every other capability out of the
// bounding set, inheritable and ambient empty, no_new_privs. Every collector
// must work and flows must count real traffic between two test pods; with
// one capability fewer, the documented degradation must show (pcap
// fallback, or flows down, with the reason in the log) and the rest keeps
// working.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "agent_process.h"
#include "flows_lab.h"
#include "kernel_pod.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const char* const kCollectors[] = {"cgroup", "procnet", "node", "gpu", "flows"};

// The capabilities the DaemonSet adds ("BPF" -> "cap_bpf"), in file order.
std::vector<std::string> DaemonSetCaps() {
  std::ifstream in(fs::path(TRAINSCOPE_SOURCE_DIR) / "daemonset" / "base" /
                   "daemonset.yaml");
  std::vector<std::string> caps;
  std::string line;
  bool in_add = false;
  const std::regex item(R"(^\s*-\s*([A-Z_]+)\s*(#.*)?$)");
  while (std::getline(in, line)) {
    if (line.find("add:") != std::string::npos) {
      in_add = true;
      continue;
    }
    std::smatch m;
    if (in_add && std::regex_match(line, m, item)) {
      std::string name = "cap_" + m[1].str();
      std::transform(name.begin(), name.end(), name.begin(),
                     [](unsigned char c) { return std::tolower(c); });
      caps.push_back(name);
    } else if (in_add) {
      break;
    }
  }
  return caps;
}

// Every capability this kernel knows, index = capability number.
std::vector<std::string> KernelCaps() {
  int last = std::stoi(Slurp("/proc/sys/kernel/cap_last_cap"));
  uint64_t all = (last >= 63) ? ~0ULL : ((1ULL << (last + 1)) - 1);
  std::ostringstream hex;
  hex << std::hex << all;
  std::string out = ShOut("capsh --decode=0x" + hex.str());
  std::vector<std::string> caps;
  std::stringstream list(out.substr(out.find('=') + 1));
  for (std::string c; std::getline(list, c, ',');) {
    c.erase(std::remove_if(c.begin(), c.end(), ::isspace), c.end());
    if (!c.empty()) caps.push_back(c);
  }
  return caps;
}

// "CapEff:\t000000c000083004" from /proc/<pid>/status.
uint64_t StatusHex(pid_t pid, const std::string& field) {
  std::istringstream in(Slurp("/proc/" + std::to_string(pid) + "/status"));
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(field + ":", 0) == 0) {
      return std::stoull(line.substr(field.size() + 1), nullptr, 16);
    }
  }
  return ~0ULL;
}

bool Has(const std::string& text, const std::string& what) {
  return text.find(what) != std::string::npos;
}

class LeastPrivilegeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    if (!Sh("command -v capsh >/dev/null && command -v iperf3 >/dev/null")) {
      GTEST_SKIP() << "capsh (libcap2-bin) or iperf3 missing";
    }
    dir_ = fs::temp_directory_path() /
           ("trainscope-least-priv-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    granted_ = DaemonSetCaps();
    ASSERT_GE(granted_.size(), 4u) << "no capabilities.add in daemonset.yaml";
    all_ = KernelCaps();
    ASSERT_GT(all_.size(), 38u) << "capsh --decode gave too few names";
    lab_ = std::make_unique<NetnsLab>(2);
    a_ = std::make_unique<KernelPod>();
    b_ = std::make_unique<KernelPod>();
    std::ofstream(dir_ / "pods.json") << nlohmann::json{
        {"apiVersion", "v1"},
        {"kind", "PodList"},
        {"metadata", {{"resourceVersion", "1"}}},
        {"items",
         {KernelPodJson(*a_, "least-priv", "lp-a", lab_->ip(0)),
          KernelPodJson(*b_, "least-priv", "lp-b",
                        lab_->ip(1))}}}.dump();
    // Each pod runs a process as another user (nobody), as a training
    // container would: the agent reads its /proc/<pid>/net/dev and ns links.
    for (int i = 0; i < 2; ++i) {
      residents_.push_back(std::make_unique<PodProcess>(
          i == 0 ? *a_ : *b_, lab_->netns(i),
          std::vector<std::string>{"setpriv", "--reuid=65534", "--regid=65534",
                                   "--clear-groups", "sleep", "300"},
          "/dev/null"));
    }
  }
  void TearDown() override {
    agent_.reset();  // before the pods and the lab it watches
    residents_.clear();
    b_.reset();
    a_.reset();
    lab_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Starts the agent with `keep` as its only capabilities; returns them as
  // the kernel's bit mask.
  uint64_t StartAgent(const std::vector<std::string>& keep) {
    uint64_t mask = 0;
    std::string drop;
    for (size_t i = 0; i < all_.size(); ++i) {
      if (std::find(keep.begin(), keep.end(), all_[i]) != keep.end()) {
        mask |= 1ULL << i;
      } else {
        drop += (drop.empty() ? "" : ",") + all_[i];
      }
    }
    port_ = FreePort();
    const fs::path src(TRAINSCOPE_SOURCE_DIR);
    std::string cmd =
        "exec env TRAINSCOPE_FAKE_NVML_CONFIG=" +
        (src / "tests/fixtures/hosts/v2-systemd/nvml.json").string() + " " +
        TRAINSCOPE_AGENT_BIN + " --listen 127.0.0.1:" + std::to_string(port_) +
        " --interval 0.5 --node-name node-a --discovery file --pod-file " +
        (dir_ / "pods.json").string() +
        " --pod-filter all --flows ebpf --pcap-interfaces " +
        lab_->host_veth(0) + " --nvml-library " + TRAINSCOPE_FAKE_NVML;
    // capsh drops the rest from the bounding set and clears inheritable and
    // ambient; bash then execs the agent as uid 0, whose permitted and
    // effective sets become the bounding set, as runc does for a container.
    agent_ = std::make_unique<ChildProcess>(
        std::vector<std::string>{"capsh", "--drop=" + drop, "--inh=", "--noamb",
                                 "--no-new-privs", "--", "-c", cmd},
        (dir_ / "agent.log").string());
    return mask;
  }

  // The scrape once every collector has reported (and pods have reached
  // the flows collector); "" if the agent never answered.
  std::string WaitCollectors() {
    std::string last;
    for (int i = 0; i < 60; ++i) {
      std::this_thread::sleep_for(250ms);
      auto got = HttpGet(port_, "/metrics");
      if (!got) continue;
      last = *got;
      bool all = true;
      for (const char* c : kCollectors) {
        all = all && Has(last, "trainscope_collector_up{collector=\"" +
                                   std::string(c) + "\"}");
      }
      if (all && i >= 6) break;
    }
    return last;
  }

  // About 2 MB (IperfClientArgs) from pod a to pod b on the default training
  // port (pcap mode only captures training ports); the bytes the agent
  // counted from lp-a to lp-b after it (wire bytes) and the payload the
  // server received.
  struct Counted {
    double counted = 0, received = 0;
  };
  std::optional<Counted> TrafficCounted() {
    WaitSamplerCycles(port_, 2);
    {
      PodProcess server(*b_, lab_->netns(1),
                        {"iperf3", "-s", "-1", "-B", lab_->ip(1), "-p", "2222"},
                        (dir_ / "s.log").string());
      if (!WaitListening(server.pid(), 2222, 10s)) {
        ADD_FAILURE() << "iperf3 server: " << Slurp((dir_ / "s.log").string());
        return std::nullopt;
      }
      PodProcess client(*a_, lab_->netns(0), IperfClientArgs(lab_->ip(1), 2222),
                        (dir_ / "c.json").string());
      if (client.Wait(20s) != std::optional<int>(0)) {
        ADD_FAILURE() << "iperf3 failed: " << Slurp((dir_ / "c.json").string());
        return std::nullopt;
      }
      server.Wait(5s);
    }
    const auto received = IperfReceivedBytes(Slurp((dir_ / "c.json").string()));
    if (!received || *received < 1e6) {
      ADD_FAILURE() << "iperf3 moved too little: "
                    << Slurp((dir_ / "c.json").string());
      return std::nullopt;
    }
    std::optional<double> tx;
    for (int i = 0; i < 40; ++i) {
      if (auto m = HttpGet(port_, "/metrics")) {
        tx = MetricValue(*m, "trainscope_peer_transmit_bytes_total",
                         {"pod=\"lp-a\"", "peer_pod=\"lp-b\""});
        if (tx && *tx >= *received) break;
      }
      std::this_thread::sleep_for(250ms);
    }
    if (!tx) return std::nullopt;
    return Counted{*tx, *received};
  }

  std::vector<std::string> Without(const std::vector<std::string>& drop) const {
    std::vector<std::string> out;
    for (const auto& c : granted_) {
      if (std::find(drop.begin(), drop.end(), c) == drop.end()) {
        out.push_back(c);
      }
    }
    return out;
  }

  std::string Log() const { return Slurp((dir_ / "agent.log").string()); }

  fs::path dir_;
  std::vector<std::string> granted_, all_;
  std::unique_ptr<NetnsLab> lab_;
  std::unique_ptr<KernelPod> a_, b_;
  std::vector<std::unique_ptr<PodProcess>> residents_;
  std::unique_ptr<ChildProcess> agent_;
  int port_ = 0;
};

TEST_F(LeastPrivilegeTest, DaemonSetCapabilitiesRunEveryCollector) {
  const uint64_t mask = StartAgent(granted_);
  const std::string m = WaitCollectors();
  ASSERT_FALSE(m.empty()) << Log();
  // The agent really runs with exactly these capabilities.
  const pid_t pid = agent_->pid();
  EXPECT_EQ(StatusHex(pid, "CapEff"), mask);
  EXPECT_EQ(StatusHex(pid, "CapPrm"), mask);
  EXPECT_EQ(StatusHex(pid, "CapBnd"), mask);
  EXPECT_EQ(StatusHex(pid, "CapInh"), 0u);
  EXPECT_EQ(StatusHex(pid, "CapAmb"), 0u);
  EXPECT_TRUE(
      Has(Slurp("/proc/" + std::to_string(pid) + "/status"), "NoNewPrivs:\t1"));
  for (const char* c : kCollectors) {
    EXPECT_TRUE(Has(
        m, "trainscope_collector_up{collector=\"" + std::string(c) + "\"} 1"))
        << c << "\n"
        << m << Log();
  }
  EXPECT_TRUE(Has(m, "trainscope_flows_mode{mode=\"ebpf\"} 1")) << m;
  auto tx = TrafficCounted();
  ASSERT_TRUE(tx) << Log();
  EXPECT_GE(tx->counted, tx->received);
}

// One capability fewer: what the flows collector does instead, and the
// reason it logs. The other collectors never need these.
struct Degradation {
  std::vector<std::string> drop;
  const char* mode;  // flows mode afterwards, "" = none
  bool flows_up;
  const char* log;  // fragment of the warning that says why ("" = none)
};

// Stable test names for ctest (the default prints the struct's bytes).
void PrintTo(const Degradation& d, std::ostream* os) {
  *os << "drop";
  for (const auto& c : d.drop) *os << " " << c;
}

class LeastPrivilegeDegradationTest
    : public LeastPrivilegeTest,
      public ::testing::WithParamInterface<Degradation> {};

TEST_P(LeastPrivilegeDegradationTest, FlowsDegradeAsDocumentedRestWorks) {
  const Degradation& d = GetParam();
  for (const auto& c : d.drop) {
    ASSERT_NE(std::find(granted_.begin(), granted_.end(), c), granted_.end())
        << c << " is not in the DaemonSet any more: update this test";
  }
  StartAgent(Without(d.drop));
  const std::string m = WaitCollectors();
  ASSERT_FALSE(m.empty()) << Log();
  for (const char* c : kCollectors) {
    const bool up = std::string(c) != "flows" || d.flows_up;
    EXPECT_TRUE(Has(m, "trainscope_collector_up{collector=\"" + std::string(c) +
                           "\"} " + (up ? "1" : "0")))
        << c << "\n"
        << m << Log();
  }
  if (*d.mode) {
    EXPECT_TRUE(
        Has(m, "trainscope_flows_mode{mode=\"" + std::string(d.mode) + "\"} 1"))
        << m;
  }
  if (*d.log) {
    EXPECT_TRUE(Has(Log(), d.log)) << Log();
  }
  if (d.flows_up) {
    auto tx = TrafficCounted();
    ASSERT_TRUE(tx) << Log();
    if (std::string(d.mode) == "pcap") {
      // The 5% of flows_accuracy_test (which owns pcap accuracy): the
      // capture keeps its own counting window. Beyond it, a capture that fell
      // behind iperf3 on a busy machine must report its drops.
      auto m2 = HttpGet(port_, "/metrics");
      ASSERT_TRUE(m2);
      const double drops =
          MetricValue(*m2, "trainscope_flows_pcap_kernel_drops_total", {})
              .value_or(0) +
          MetricValue(*m2, "trainscope_flows_pcap_interface_drops_total", {})
              .value_or(0);
      EXPECT_GT(tx->counted, 0);
      EXPECT_TRUE(tx->counted >= 0.95 * tx->received || drops > 0)
          << "counted " << tx->counted << " of " << tx->received
          << " bytes received, no drops reported";
    } else {
      EXPECT_GE(tx->counted, tx->received);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(
    OneFewer, LeastPrivilegeDegradationTest,
    ::testing::Values(
        Degradation{{"cap_bpf"},
                    "pcap",
                    true,
                    "[flows] eBPF unavailable: loading the BPF programs "
                    "failed: Operation not permitted"},
        Degradation{{"cap_net_admin"},
                    "pcap",
                    true,
                    "[flows] eBPF unavailable: attaching cgroup_skb/ingress "
                    "to "},
        // Without the pcap fallback's capability as well nothing can count
        // flows: the collector is down, the others carry on.
        // Without CAP_PERFMON the flows programs may not read headers in
        // place: loaded again with the headers copied, they count on.
        Degradation{{"cap_perfmon"},
                    "ebpf",
                    true,
                    "loading again with headers copied out"},
        // Measured, not assumed: with pod processes of another user
        // (nobody) on kernel 6.x, these two cost no feature this test
        // sees (docs/reliability.md says what they are kept for). If one
        // starts to matter, this fails and the table must say so.
        Degradation{{"cap_sys_ptrace"}, "ebpf", true, ""},
        Degradation{{"cap_dac_read_search"}, "ebpf", true, ""},
        Degradation{
            {"cap_bpf", "cap_net_raw"}, "", false, "libpcap fallback failed"}),
    [](const ::testing::TestParamInfo<Degradation>& param_info) {
      std::string name;
      for (const auto& c : param_info.param.drop) name += c.substr(4) + "_";
      return "Without_" + name.substr(0, name.size() - 1);
    });

}  // namespace
}  // namespace trainscope::testing
