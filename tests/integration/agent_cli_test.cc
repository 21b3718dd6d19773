// The agent binary's behaviour at its edges: bad input exits non-zero with a
// message that names the problem; SIGTERM stops it within 2 s.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>

#include <filesystem>

#include "agent_process.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

const fs::path kHost =
    fs::path(TRAINSCOPE_SOURCE_DIR) / "tests/fixtures/hosts/v2-systemd";

std::vector<std::string> FixtureArgs(int port) {
  return {"--listen",      "127.0.0.1:" + std::to_string(port),
          "--interval",    "0.2",
          "--discovery",   "file",
          "--pod-file",    (kHost / "pods.json").string(),
          "--host-proc",   (kHost / "proc").string(),
          "--host-sys",    (kHost / "sys").string(),
          "--cgroup-root", (kHost / "sys/fs/cgroup").string()};
}

struct BadInput {
  const char* name;
  std::vector<std::string> args;
  const char* message;
};

class AgentBadInputTest : public ::testing::TestWithParam<BadInput> {};

TEST_P(AgentBadInputTest, ExitsNonZeroNamingTheProblem) {
  AgentProcess agent(GetParam().args);
  auto code = agent.WaitExit(std::chrono::seconds(10));
  ASSERT_TRUE(code.has_value()) << "agent did not exit";
  EXPECT_NE(*code, 0);
  EXPECT_LT(*code, 128) << "crashed rather than exiting: " << agent.Stderr();
  EXPECT_THAT(agent.Stderr(), HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, AgentBadInputTest,
    ::testing::Values(
        BadInput{"unknown_flag", {"--frobnicate"}, "--frobnicate"},
        BadInput{"interval_zero", {"--interval", "0"}, "--interval"},
        BadInput{"interval_negative", {"--interval", "-5"}, "--interval"},
        BadInput{"unreadable_proc",
                 {"--host-proc", "/nonexistent/proc"},
                 "--host-proc /nonexistent/proc: not a directory"},
        BadInput{"missing_pod_file",
                 {"--discovery", "file", "--pod-file", "/nonexistent.json",
                  "--listen", "127.0.0.1:0"},
                 "/nonexistent.json"},
        BadInput{"missing_token_file",
                 {"--discovery", "apiserver", "--kube-api",
                  "http://127.0.0.1:1", "--kube-token-file",
                  "/nonexistent/token", "--listen", "127.0.0.1:0"},
                 "/nonexistent/token"},
        BadInput{"bad_role_labels",
                 {"--discovery", "cgroup", "--role-labels", "a,b", "--listen",
                  "127.0.0.1:0"},
                 "--role-labels"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(AgentProcessTest, PortInUseIsAClearStartupError) {
  const int port = FreePort();
  AgentProcess first(FixtureArgs(port));
  ASSERT_TRUE(first.WaitHttpOk(port, "/healthz", std::chrono::seconds(10)))
      << first.Stderr();
  AgentProcess second(FixtureArgs(port));
  auto code = second.WaitExit(std::chrono::seconds(10));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 1);
  EXPECT_THAT(second.Stderr(),
              HasSubstr("cannot listen on 127.0.0.1:" + std::to_string(port)));
  // The first agent is unaffected.
  EXPECT_TRUE(first.WaitHttpOk(port, "/metrics", std::chrono::seconds(2)));
}

TEST(AgentProcessTest, SigtermStopsWithinTwoSeconds) {
  const int port = FreePort();
  auto args = FixtureArgs(port);
  args[3] = "5";  // a long interval: shutdown must not wait for the clock
  AgentProcess agent(args);
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", std::chrono::seconds(10)))
      << agent.Stderr();
  // An open keep-alive scrape connection must not hold the shutdown up.
  httplib::Client idle("127.0.0.1", port);
  idle.set_keep_alive(true);
  ASSERT_TRUE(idle.Get("/metrics"));
  std::chrono::milliseconds took{};
  auto code = agent.Terminate(std::chrono::seconds(5), &took);
  ASSERT_TRUE(code.has_value()) << "agent ignored SIGTERM";
  EXPECT_EQ(*code, 0) << agent.Stderr();
  EXPECT_LT(took, std::chrono::seconds(2));
  EXPECT_THAT(agent.Stderr(), HasSubstr("stopped"));
}

}  // namespace
}  // namespace trainscope::testing
