#include "config.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <tuple>
#include <vector>

#include "config_flags.h"
#include "node/node_collector.h"

namespace trainscope {
namespace {

std::variant<AgentConfig, ExitRequest> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "trainscope-agent");
  return ParseAgentConfig(static_cast<int>(args.size()), args.data());
}

TEST(ConfigTest, Defaults) {
  ::unsetenv("TRAINSCOPE_INTERVAL");
  ::setenv("NODE_NAME", "node-from-env", 1);
  auto parsed = Parse({});
  ASSERT_TRUE(std::holds_alternative<AgentConfig>(parsed));
  const auto& cfg = std::get<AgentConfig>(parsed);
  EXPECT_EQ(cfg.listen_host, "0.0.0.0");
  EXPECT_EQ(cfg.listen_port, 9476);
  EXPECT_EQ(cfg.interval_seconds, 5);
  EXPECT_EQ(cfg.node_name, "node-from-env");
  EXPECT_EQ(cfg.discovery.mode, DiscoveryMode::kApiServer);
  EXPECT_EQ(cfg.discovery.node_name, "node-from-env");
  EXPECT_TRUE(cfg.pod_filter.training_only);
  ASSERT_TRUE(cfg.on_demand_profiler.has_value());
  ASSERT_TRUE(cfg.continuous_profiler.has_value());
  EXPECT_EQ(cfg.continuous_profiler->hz, 19);
  EXPECT_FALSE(cfg.continuous_profiler->offcpu);
  EXPECT_EQ(cfg.host.proc, "/proc");
  ::unsetenv("NODE_NAME");
}

TEST(ConfigTest, EnvironmentSetsFlagsAndFlagsWin) {
  ::setenv("TRAINSCOPE_INTERVAL", "2.5", 1);
  ::setenv("TRAINSCOPE_LISTEN", "127.0.0.1:9999", 1);
  auto parsed = Parse({"--listen", "[::1]:1234"});
  ::unsetenv("TRAINSCOPE_INTERVAL");
  ::unsetenv("TRAINSCOPE_LISTEN");
  ASSERT_TRUE(std::holds_alternative<AgentConfig>(parsed));
  const auto& cfg = std::get<AgentConfig>(parsed);
  EXPECT_EQ(cfg.interval_seconds, 2.5);
  EXPECT_EQ(cfg.listen_host, "::1");
  EXPECT_EQ(cfg.listen_port, 1234);
}

TEST(ConfigTest, BadInputExitsNonZero) {
  const std::vector<std::vector<const char*>> bad = {
      {"--no-such-flag"},
      {"--interval", "0"},
      {"--interval", "-1"},
      {"--interval", "soon"},
      {"--listen", "nowhere"},
      {"--listen", "127.0.0.1:70000"},
      {"--discovery", "dns"},
      {"--discovery", "file"},  // without --pod-file
      {"--host-proc", "/nonexistent/proc"},
      {"--cgroup-root", "/etc/hostname"},  // not a directory
      {"--log-level", "loud"},
      {"--log-format", "xml"},
      {"--peer-pods-namespaces", "Training"},  // not a namespace name
      {"--discovery", "cgroup", "--peer-pods-selector", "job"},
      {"--node-link-mbit", "-5"},
      {"--node-interfaces", "a-name-longer-than-15"},
      {"--node-interfaces", "eth0,../x"},
  };
  for (const auto& args : bad) {
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    auto parsed = Parse(args);
    std::string err = testing::internal::GetCapturedStderr() +
                      testing::internal::GetCapturedStdout();
    ASSERT_TRUE(std::holds_alternative<ExitRequest>(parsed)) << args[0];
    EXPECT_NE(std::get<ExitRequest>(parsed).code, 0) << args[0];
    EXPECT_FALSE(err.empty()) << args[0];
  }
}

TEST(ConfigTest, PeerPodFlagsAndEnvironment) {
  auto parsed = Parse({});
  ASSERT_TRUE(std::holds_alternative<AgentConfig>(parsed));
  // On by default: training pods of every node name cross-node peers.
  EXPECT_EQ(std::get<AgentConfig>(parsed).discovery.peer_pods_selector, "auto");
  EXPECT_TRUE(
      std::get<AgentConfig>(parsed).discovery.peer_pods_namespaces.empty());

  ::setenv("TRAINSCOPE_PEER_PODS_NAMESPACES", "training, research", 1);
  parsed = Parse({"--peer-pods-selector", "training.kubeflow.org/job-name"});
  ::unsetenv("TRAINSCOPE_PEER_PODS_NAMESPACES");
  ASSERT_TRUE(std::holds_alternative<AgentConfig>(parsed));
  const auto& cfg = std::get<AgentConfig>(parsed);
  EXPECT_EQ(cfg.discovery.peer_pods_selector, "training.kubeflow.org/job-name");
  EXPECT_EQ(cfg.discovery.peer_pods_namespaces,
            (std::vector<std::string>{"training", "research"}));
}

TEST(ConfigTest, KubeWatchTimeoutFlagAndEnvironment) {
  auto parsed = Parse({});
  ASSERT_TRUE(std::holds_alternative<AgentConfig>(parsed));
  EXPECT_EQ(std::get<AgentConfig>(parsed).discovery.watch_timeout,
            std::chrono::seconds(300));
  ::setenv("TRAINSCOPE_KUBE_WATCH_TIMEOUT", "45", 1);
  parsed = Parse({});
  ::unsetenv("TRAINSCOPE_KUBE_WATCH_TIMEOUT");
  ASSERT_TRUE(std::holds_alternative<AgentConfig>(parsed));
  EXPECT_EQ(std::get<AgentConfig>(parsed).discovery.watch_timeout,
            std::chrono::seconds(45));
  for (const char* bad : {"0", "3601"}) {
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    parsed = Parse({"--kube-watch-timeout", bad});
    testing::internal::GetCapturedStderr();
    testing::internal::GetCapturedStdout();
    EXPECT_TRUE(std::holds_alternative<ExitRequest>(parsed)) << bad;
  }
}

TEST(ConfigTest, NodeLinkFlags) {
  auto parsed =
      Parse({"--node-interfaces", "bond0, ,eth1", "--node-link-mbit", "1000"});
  ASSERT_TRUE(std::holds_alternative<AgentConfig>(parsed));
  const auto node = std::get<AgentConfig>(parsed).collectors.Get<NodeOptions>();
  EXPECT_EQ(node.interfaces, (std::vector<std::string>{"bond0", "eth1"}));
  ASSERT_TRUE(node.link_speed_bytes_per_second.has_value());
  EXPECT_DOUBLE_EQ(*node.link_speed_bytes_per_second, 1000e6 / 8);
  // The default peer watch needs no apiserver discovery to parse.
  EXPECT_TRUE(
      std::holds_alternative<AgentConfig>(Parse({"--discovery", "cgroup"})));
}

TEST(ConfigTest, HostPathErrorNamesFlagAndPath) {
  testing::internal::CaptureStderr();
  auto parsed = Parse({"--host-proc", "/nonexistent/proc"});
  std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("--host-proc /nonexistent/proc"), std::string::npos)
      << err;
}

// Every flag that takes a number, found from the flag table itself (a new
// one is covered without editing this test): NaN, infinities, huge,
// negative and empty values exit 2 with a message naming the flag, never
// start an agent that samples every "nan" seconds.
TEST(ConfigTest, EveryNumberFlagRefusesNonFiniteHugeNegativeAndEmpty) {
  CLI::App app;
  AgentConfig cfg;
  FlagText text;
  AddAgentFlags(app, cfg, text);
  std::vector<std::string> number_flags;
  for (const CLI::Option* opt : app.get_options()) {
    const std::string type = opt->get_type_name();
    if (type.find("FLOAT") != std::string::npos ||
        type.find("INT") != std::string::npos) {
      number_flags.push_back(opt->get_name());
    }
  }
  ASSERT_GE(number_flags.size(), 12u) << "the flag table changed shape";
  for (const std::string& flag : number_flags) {
    for (const char* value :
         {"nan", "NaN", "inf", "-inf", "1e308", "1e18", "-1", "", "5s"}) {
      testing::internal::CaptureStderr();
      testing::internal::CaptureStdout();
      auto parsed = Parse({flag.c_str(), value});
      const std::string err = testing::internal::GetCapturedStderr() +
                              testing::internal::GetCapturedStdout();
      ASSERT_TRUE(std::holds_alternative<ExitRequest>(parsed))
          << flag << " '" << value << "' was accepted";
      EXPECT_EQ(std::get<ExitRequest>(parsed).code, 2) << flag << " " << value;
      EXPECT_NE(err.find(flag), std::string::npos)
          << flag << " '" << value << "': " << err;
      EXPECT_LT(err.size(), 400u) << "a short message, not a 300-digit number";
    }
  }
}

TEST(ConfigTest, IntervalAndBurstGapKeepTheirRanges) {
  for (auto [flag, value, ok] :
       std::vector<std::tuple<const char*, const char*, bool>>{
           {"--interval", "1e-9", false},
           {"--interval", "0.05", false},
           {"--interval", "0.1", true},
           {"--interval", "3600", true},
           {"--interval", "1e10", false},
           {"--step-burst-gap", "0", true},
           {"--step-burst-gap", "1e-9", false},
           {"--step-burst-gap", "0.02", true},
           {"--http-timeout", "1e-9", false},
       }) {
    testing::internal::CaptureStderr();
    auto parsed = Parse({flag, value});
    const std::string err = testing::internal::GetCapturedStderr();
    EXPECT_EQ(std::holds_alternative<AgentConfig>(parsed), ok)
        << flag << " " << value << ": " << err;
  }
}

TEST(ConfigTest, HelpListsEveryFlagWithItsEnvironmentVariable) {
  testing::internal::CaptureStdout();
  auto parsed = Parse({"--help"});
  std::string help = testing::internal::GetCapturedStdout();
  ASSERT_TRUE(std::holds_alternative<ExitRequest>(parsed));
  EXPECT_EQ(std::get<ExitRequest>(parsed).code, 0);
  for (const char* flag : {"--listen",
                           "--interval",
                           "--node-name",
                           "--discovery",
                           "--pod-file",
                           "--kube-api",
                           "--kube-token-file",
                           "--kube-watch-timeout",
                           "TRAINSCOPE_KUBE_WATCH_TIMEOUT",
                           "--host-proc",
                           "--host-sys",
                           "--cgroup-root",
                           "--nvml-library",
                           "--log-level",
                           "--log-format",
                           "TRAINSCOPE_LOG_FORMAT",
                           "--role-labels",
                           "--peer-pods-selector",
                           "--peer-pods-namespaces",
                           "TRAINSCOPE_PEER_PODS_SELECTOR",
                           "TRAINSCOPE_PEER_PODS_NAMESPACES",
                           "--node-interfaces",
                           "--node-link-mbit",
                           "TRAINSCOPE_NODE_LINK_MBIT"}) {
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  }
  EXPECT_NE(help.find("TRAINSCOPE_INTERVAL"), std::string::npos);
}

TEST(SplitListenAddressTest, Table) {
  struct Case {
    const char* in;
    bool ok;
    const char* host;
    int port;
  } cases[] = {
      {"0.0.0.0:9476", true, "0.0.0.0", 9476},
      {":80", true, "0.0.0.0", 80},
      {"[::]:1", true, "::", 1},
      {"host", false, "", 0},
      {"h:-1", false, "", 0},
      {"h:65536", false, "", 0},
      {"h:12x", false, "", 0},
  };
  for (const auto& c : cases) {
    std::string host;
    int port = 0;
    EXPECT_EQ(SplitListenAddress(c.in, &host, &port), c.ok) << c.in;
    if (c.ok) {
      EXPECT_EQ(host, c.host) << c.in;
      EXPECT_EQ(port, c.port) << c.in;
    }
  }
}

}  // namespace
}  // namespace trainscope
