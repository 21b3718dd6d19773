// The hostile-input suite (issue 35), process side: every number flag of
// the real binary at NaN, infinities, huge, negative and empty values; web
// configs that are directories, FIFOs, dangling links or empty; signals
// (HUP, QUIT, TERM, INT) during scrapes. Nothing here may hang, spin or
// crash: a refused start exits 2 naming the flag or file, a signal either
// leaves the agent serving or stops it gracefully (exit 0, logged).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "agent_process.h"
#include "hostile_support.h"
#include "raw_http_client.h"
#include "tls_files.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

// The number flags, read from the real binary's --help (FLOAT/INT options),
// so a flag added later is covered without editing this test.
std::vector<std::string> NumberFlags() {
  AgentProcess help({"--help"});
  help.WaitExit(10s);
  const std::string text = help.Stderr();
  std::set<std::string> flags;
  static const std::regex kOption(R"((--[a-z0-9-]+) +(UINT|INT|FLOAT))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), kOption);
       it != std::sregex_iterator(); ++it) {
    flags.insert((*it)[1]);
  }
  return {flags.begin(), flags.end()};
}

TEST(HostileFlagsTest, EveryNumberFlagRefusesAbsurdValuesAndExits2) {
  const std::vector<std::string> flags = NumberFlags();
  ASSERT_GE(flags.size(), 12u) << "--help did not list the number flags";
  for (const std::string& flag : flags) {
    for (const char* value : {"nan", "inf", "-inf", "1e308", "-1", ""}) {
      AgentProcess agent({"--listen", "127.0.0.1:0", flag, value});
      const auto code = agent.WaitExit(10s);
      ASSERT_TRUE(code.has_value())
          << flag << " '" << value << "' started an agent";
      EXPECT_EQ(*code, 2) << flag << " '" << value << "': " << agent.Stderr();
      EXPECT_THAT(agent.Stderr(), HasSubstr(flag)) << value;
    }
  }
  // The values the issue found spinning a core.
  for (const char* value : {"NaN", "1e10", "1e18", "1e-9"}) {
    AgentProcess agent({"--listen", "127.0.0.1:0", "--interval", value});
    const auto code = agent.WaitExit(10s);
    ASSERT_TRUE(code.has_value()) << "--interval " << value << " started";
    EXPECT_EQ(*code, 2);
    EXPECT_THAT(agent.Stderr(),
                HasSubstr("expected a number from 0.1 to 3600"));
  }
}

class HostileWebConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("trainscope-hostile-web-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

// Naming the Secret's mount directory instead of the file inside it once
// started the agent with every endpoint open.
TEST_F(HostileWebConfigTest, AnUnreadableWebConfigStopsTheAgent) {
  const fs::path fifo = dir_ / "web.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  fs::create_symlink(dir_ / "gone.yml", dir_ / "dangling.yml");
  fs::create_directories(dir_ / "secret");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {(dir_ / "secret").string(),
       "is a directory, not a file (name the file inside it)"},
      {fifo.string(), "is a FIFO, not a file"},
      {(dir_ / "dangling.yml").string(), "cannot read"},
      {"/dev/zero", "is a device"},
      {"/proc/self/mem", "cannot read"},
  };
  for (const auto& [path, message] : cases) {
    const int port = FreePort();
    AgentProcess agent(FixtureHostArgs("127.0.0.1:" + std::to_string(port),
                                       {"--web-config-file", path}));
    const auto code = agent.WaitExit(10s);
    ASSERT_TRUE(code.has_value()) << path << ": the agent started";
    EXPECT_EQ(*code, 2) << path;
    EXPECT_THAT(agent.Stderr(), HasSubstr(message)) << path;
    EXPECT_FALSE(HttpGet(port, "/metrics").has_value())
        << path << ": something answers on the port";
  }
}

TEST_F(HostileWebConfigTest, AnEmptyWebConfigStartsOpenAndSaysSo) {
  ASSERT_TRUE(WriteFile((dir_ / "empty.yml").string(), ""));
  const int port = FreePort();
  AgentProcess agent(
      FixtureHostArgs("127.0.0.1:" + std::to_string(port),
                      {"--web-config-file", (dir_ / "empty.yml").string()}));
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
  EXPECT_THAT(agent.Stderr(),
              HasSubstr("turns on neither TLS nor authentication"));
}

class HostileSignalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    port_ = FreePort();
    agent_ = std::make_unique<AgentProcess>(
        FixtureHostArgs("127.0.0.1:" + std::to_string(port_)));
    ASSERT_TRUE(agent_->WaitHttpOk(port_, "/readyz", 10s)) << agent_->Stderr();
  }
  // Scrapes from a second thread while `sig` arrives; returns how many
  // scrapes were answered 200 and how many got anything else.
  std::pair<int, int> ScrapeThrough(int sig) {
    std::atomic<bool> stop{false};
    std::atomic<int> ok{0}, other{0};
    std::thread scraper([&] {
      while (!stop) {
        auto raw = RawGet(port_, "/metrics", 2s);
        (raw && StatusOf(*raw) == 200 ? ok : other)++;
      }
    });
    std::this_thread::sleep_for(300ms);
    ::kill(agent_->pid(), sig);
    std::this_thread::sleep_for(700ms);
    stop = true;
    scraper.join();
    return {ok.load(), other.load()};
  }
  int port_ = 0;
  std::unique_ptr<AgentProcess> agent_;
};

TEST_F(HostileSignalTest, SighupDuringScrapesLeavesTheAgentServing) {
  const auto [ok, other] = ScrapeThrough(SIGHUP);
  EXPECT_GT(ok, 0);
  EXPECT_EQ(other, 0) << "every scrape around the SIGHUP answered 200";
  ASSERT_FALSE(agent_->WaitExit(200ms).has_value())
      << "SIGHUP killed the agent: " << agent_->Stderr();
  EXPECT_THAT(agent_->Stderr(),
              HasSubstr("SIGHUP received: nothing to reload"));
  const ScrapeCheck check = ScrapeAnswers(port_, "sighup");
  EXPECT_TRUE(check.ok) << check.last_error;
}

TEST_F(HostileSignalTest, StopSignalsDuringScrapesShutDownGracefully) {
  for (int sig : {SIGQUIT, SIGTERM, SIGINT}) {
    if (!agent_) SetUp();
    ScrapeThrough(sig);
    const auto code = agent_->WaitExit(10s);
    ASSERT_TRUE(code.has_value()) << strsignal(sig) << ": still running";
    EXPECT_EQ(*code, 0) << strsignal(sig) << ": " << agent_->Stderr();
    EXPECT_THAT(agent_->Stderr(), HasSubstr("[agent] stopped")) << sig;
    agent_.reset();
  }
}

}  // namespace
}  // namespace trainscope::testing
