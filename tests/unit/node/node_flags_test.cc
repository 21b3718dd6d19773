// The node collector's flags, on a command line of their own: declared and
// checked in the collector's folder, nothing of the agent needed.
#include "node/node_flags.h"

#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace trainscope {
namespace {

struct Case {
  std::vector<std::string> args;
  std::string error;  // "" = accepted
  std::vector<std::string> interfaces;
  std::optional<double> link_bytes_per_second;
};

TEST(NodeFlagsTest, ParsesAndChecksTheUplinkFlags) {
  const std::vector<Case> cases = {
      {{}, "", {}, std::nullopt},
      {{"--node-interfaces", "bond0, eth1,,"}, "", {"bond0", "eth1"}, {}},
      {{"--node-link-mbit", "1000"}, "", {}, 1000e6 / 8},
      {{"--node-link-mbit", "0"}, "", {}, std::nullopt},
      {{"--node-interfaces", "a-name-of-16-chr"}, "--node-interfaces", {}, {}},
      {{"--node-interfaces", "../eth0"}, "--node-interfaces", {}, {}},
  };
  for (const Case& c : cases) {
    NodeOptions options;
    NodeFlags flags(&options);
    CLI::App app;
    flags.Add(app);
    std::vector<std::string> args(c.args.rbegin(), c.args.rend());
    app.parse(args);
    const std::string error = flags.Finish();
    if (!c.error.empty()) {
      EXPECT_NE(error.find(c.error), std::string::npos) << error;
      continue;
    }
    EXPECT_EQ(error, "");
    EXPECT_EQ(options.interfaces, c.interfaces);
    EXPECT_EQ(options.link_speed_bytes_per_second, c.link_bytes_per_second);
  }
}

TEST(NodeFlagsTest, RefusesALinkFasterThanAnyNic) {
  NodeOptions options;
  NodeFlags flags(&options);
  CLI::App app;
  flags.Add(app);
  std::vector<std::string> args = {"1e8", "--node-link-mbit"};
  EXPECT_THROW(app.parse(args), CLI::ValidationError);
}

}  // namespace
}  // namespace trainscope
