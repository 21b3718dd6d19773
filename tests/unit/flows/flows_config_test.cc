// The agent's flows flags: defaults, environment, validation.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <vector>

#include "config.h"
#include "flows/flows_options.h"

namespace trainscope {
namespace {

std::variant<AgentConfig, ExitRequest> Parse(std::vector<const char*> args) {
  args.insert(args.begin(), "trainscope-agent");
  return ParseAgentConfig(static_cast<int>(args.size()), args.data());
}

TEST(FlowsConfig, Defaults) {
  auto parsed = Parse({});
  ASSERT_TRUE(std::holds_alternative<AgentConfig>(parsed));
  const auto flows =
      std::get<AgentConfig>(parsed).collectors.Get<FlowsOptions>();
  EXPECT_EQ(flows.mode, FlowsMode::kEbpf);
  EXPECT_TRUE(flows.pcap_interfaces.empty());
  EXPECT_EQ(flows.training_ports, std::vector<uint16_t>{2222});
  EXPECT_EQ(flows.map_entries, 65536u);
  EXPECT_EQ(flows.pcap_buffer_bytes, 32 << 20);
  EXPECT_EQ(flows.cgroup2_path, "");
  EXPECT_DOUBLE_EQ(flows.burst_gap_s, 0.02);
}

TEST(FlowsConfig, FlagsAndEnvironment) {
  ::setenv("TRAINSCOPE_FLOWS", "pcap", 1);
  ::setenv("TRAINSCOPE_TRAINING_PORTS", "2222,2223", 1);
  ::setenv("TRAINSCOPE_FLOW_MAP_ENTRIES", "1024", 1);
  auto parsed = Parse({"--pcap-interfaces", "any,eth1", "--training-ports",
                       "2222,5000", "--pcap-buffer-bytes", "1048576",
                       "--cgroup2-path", "/sys/fs/cgroup/unified"});
  ::unsetenv("TRAINSCOPE_FLOWS");
  ::unsetenv("TRAINSCOPE_TRAINING_PORTS");
  ::unsetenv("TRAINSCOPE_FLOW_MAP_ENTRIES");
  ASSERT_TRUE(std::holds_alternative<AgentConfig>(parsed));
  const auto& cfg = std::get<AgentConfig>(parsed);
  const auto flows = cfg.collectors.Get<FlowsOptions>();
  EXPECT_EQ(flows.mode, FlowsMode::kPcap);
  EXPECT_EQ(flows.pcap_interfaces, (std::vector<std::string>{"any", "eth1"}));
  EXPECT_EQ(flows.training_ports, (std::vector<uint16_t>{2222, 5000}));
  EXPECT_EQ(flows.map_entries, 1024u);
  EXPECT_EQ(flows.pcap_buffer_bytes, 1 << 20);
  EXPECT_EQ(flows.cgroup2_path, "/sys/fs/cgroup/unified");
  // The profiler attaches under the same cgroup2 mount.
  EXPECT_EQ(cfg.on_demand_profiler->cgroup2_path, "/sys/fs/cgroup/unified");
}

TEST(FlowsConfig, RejectsBadValues) {
  const std::vector<std::vector<const char*>> bad = {
      {"--flows", "xdp"},
      {"--training-ports", "2222,abc"},
      {"--training-ports", "0"},
      {"--training-ports", "70000"},
      {"--flows", "pcap", "--training-ports", ","},
      {"--flow-map-entries", "0"},
      {"--pcap-buffer-bytes", "10"},
  };
  for (const auto& args : bad) {
    auto parsed = Parse(args);
    ASSERT_TRUE(std::holds_alternative<ExitRequest>(parsed))
        << args[0] << " " << args[1];
    EXPECT_NE(std::get<ExitRequest>(parsed).code, 0);
  }
}

}  // namespace
}  // namespace trainscope
