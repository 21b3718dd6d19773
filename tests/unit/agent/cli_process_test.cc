// The built `trainscope` binary against hostile or broken servers and bad
// flags: exit codes as the README promises (2: an unusable URL or flag;
// 1: an unreachable server or a bad answer), --timeout and
// --max-response-bytes in every command, and nothing a server sends reaches
// the terminal as an escape sequence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_server.h"

namespace trainscope::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

#ifdef TRAINSCOPE_TEST_UNDER_TSAN
constexpr auto kSlack = 5s;
#else
constexpr auto kSlack = 2s;
#endif

constexpr char kEsc = '\x1b';

// The three ways the CLI talks to a server, with `url` as the server.
std::vector<std::vector<std::string>> EveryCommand(const std::string& url) {
  return {{"report", "--agent", url},
          {"report", "--prometheus", url, "--batch-series", "0"},
          {"report", "--prometheus", url},
          {"profile", "--agent", url, "--pod", "training/ctr-ps-0", "--seconds",
           "0.2"}};
}

std::vector<std::string> With(std::vector<std::string> args,
                              const std::vector<std::string>& more) {
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

std::string Joined(const std::vector<std::string>& args) {
  std::string out;
  for (const auto& a : args) out += a + " ";
  return out;
}

class UnusableUrlTest : public ::testing::TestWithParam<const char*> {};

TEST_P(UnusableUrlTest, ExitsTwoInEveryCommand) {
  for (const auto& args : EveryCommand(GetParam())) {
    const CliResult r = RunCli(args, 10s);
    EXPECT_EQ(r.exit_code, 2) << Joined(args) << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("--")) << Joined(args);  // names the flag
    EXPECT_EQ(r.err.find(kEsc), std::string::npos) << r.err;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Urls, UnusableUrlTest,
    ::testing::Values("ftp://127.0.0.1/", "127.0.0.1:9090", "http://",
                      "http://:9090", "http://127.0.0.1:0",
                      "http://127.0.0.1:70000", "http://127.0.0.1:9x",
                      "http://127.0.0.1:", "http://a b:9090",
                      "http://user:secret@127.0.0.1:9090",
                      "http://127.0.0.1:9090?query=up", "http://127.0.0.1#x",
                      "http://[::1", "http://[zz::1]:9090",
                      "http://127.0.0.1\x1b[31m:9090"),
    [](const auto& param_info) {
      return "url_" + std::to_string(param_info.index);
    });

TEST(CliExitTest, UnreachableServerExitsOneWithAReason) {
  const std::string url = "http://127.0.0.1:" + std::to_string(ClosedPort());
  for (const auto& args : EveryCommand(url)) {
    const CliResult r = RunCli(args, 20s);
    EXPECT_EQ(r.exit_code, 1) << Joined(args) << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("connection refused")) << Joined(args);
  }
}

struct BadFlag {
  const char* name;
  std::vector<std::string> args;
  const char* message;
};

void PrintTo(const BadFlag& flag, std::ostream* os) {
  *os << Joined(flag.args);
}

class BadNumericFlagTest : public ::testing::TestWithParam<BadFlag> {};

TEST_P(BadNumericFlagTest, ExitsTwoNamingTheFlag) {
  const CliResult r = RunCli(GetParam().args, 10s);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(GetParam().message));
  EXPECT_LT(r.err.size(), 2000u) << "no 300-digit numbers";
}

std::vector<BadFlag> BadFlags() {
  const std::vector<std::string> report{"report", "--agent",
                                        "http://127.0.0.1:1"};
  const std::vector<std::string> prom{"report", "--prometheus",
                                      "http://127.0.0.1:1"};
  const std::vector<std::string> profile{"profile", "--agent",
                                         "http://127.0.0.1:1", "--pod", "a/b"};
  std::vector<BadFlag> out;
  for (const char* v : {"nan", "NaN", "inf", "-1", "0", "1e308", "0x10", "",
                        "5s", "1e-400x", "86401"}) {
    out.push_back(
        {"report_timeout", With(report, {"--timeout", v}), "--timeout"});
    out.push_back(
        {"profile_timeout", With(profile, {"--timeout", v}), "--timeout"});
    out.push_back(
        {"profile_seconds", With(profile, {"--seconds", v}), "--seconds"});
    if (std::string(v) != "86401") {  // a day and a second of history is fine
      out.push_back({"prom_range", With(prom, {"--range", v}), "--range"});
    }
    out.push_back({"prom_step", With(prom, {"--step", v}), "--step"});
  }
  for (const char* v : {"-1", "0", "010", "0x10", "1e3", "1.5", "",
                        "18446744073709551617", "1099511627777"}) {
    out.push_back({"report_max_bytes",
                   With(report, {"--max-response-bytes", v}),
                   "--max-response-bytes"});
    out.push_back({"profile_max_bytes",
                   With(profile, {"--max-response-bytes", v}),
                   "--max-response-bytes"});
  }
  for (const char* v : {"-1", "0x10", "1e3", "nan"}) {
    out.push_back(
        {"prom_batch", With(prom, {"--batch-series", v}), "--batch-series"});
    out.push_back({"profile_hz", With(profile, {"--hz", v}), "--hz"});
  }
  out.push_back({"prom_end_inf", With(prom, {"--end", "inf"}), "--end"});
  out.push_back(
      {"prom_range_huge", With(prom, {"--range", "1e10"}), "--range"});
  out.push_back({"profile_timeout_below_seconds",
                 With(profile, {"--seconds", "30", "--timeout", "10"}),
                 "--timeout 10 must be longer than --seconds 30"});
  out.push_back({"profile_no_pod",
                 {"profile", "--agent", "http://127.0.0.1:1"},
                 "--pod"});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Flags, BadNumericFlagTest,
                         ::testing::ValuesIn(BadFlags()),
                         [](const auto& param_info) {
                           return std::string(param_info.param.name) + "_" +
                                  std::to_string(param_info.index);
                         });

TEST(CliHelpTest, ShowsTheLimitsWithTheirDefaults) {
  const CliResult report = RunCli({"report", "--help"});
  EXPECT_EQ(report.exit_code, 0);
  EXPECT_THAT(report.out, HasSubstr("--timeout FLOAT:(0, 86400]=60"));
  EXPECT_THAT(report.out, HasSubstr("--max-response-bytes"));
  EXPECT_THAT(report.out, HasSubstr("=268435456"));
  const CliResult profile = RunCli({"profile", "--help"});
  EXPECT_EQ(profile.exit_code, 0);
  EXPECT_THAT(profile.out, HasSubstr("=--seconds + 60"));
  EXPECT_THAT(profile.out, HasSubstr("=268435456"));
}

TEST(CliLimitsTest, DrippingServerIsCutOffAtTimeoutInEveryCommand) {
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    server.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
    server.Drip(fd, std::string(100, ' '), 100ms);  // 10 s in all
  });
  for (const auto& command : EveryCommand(server.url())) {
    const auto args = With(command, {"--timeout", "1"});
    const CliResult r = RunCli(args, 20s);
    EXPECT_EQ(r.exit_code, 1) << Joined(args) << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("timed out after 1 s (--timeout 1)"))
        << Joined(args);
    EXPECT_LT(r.took, 1s + kSlack) << Joined(args);
  }
}

TEST(CliLimitsTest, OversizedAnswerIsRefusedWithoutHoldingIt) {
  // 96 MiB without a Content-Length; the CLI may keep 1 MiB.
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    server.Send(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
    const std::string chunk(1 << 16, ' ');
    for (int i = 0; i < 96 * 16; ++i) {
      if (!server.Send(fd, chunk)) return;
    }
  });
  for (const auto& command : EveryCommand(server.url())) {
    const auto args = With(command, {"--max-response-bytes", "1048576"});
    const CliResult r = RunCli(args, 30s);
    EXPECT_EQ(r.exit_code, 1) << Joined(args) << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr("larger than 1048576 bytes "
                                 "(--max-response-bytes)"))
        << Joined(args);
#ifndef TRAINSCOPE_TEST_SANITIZER_ALLOCATOR
    // Holding the body would take 96 MiB; the process needs about 10.
    EXPECT_LT(r.max_rss_kib, 48 * 1024) << Joined(args);
#endif
  }
}

TEST(CliSanitizeTest, ServerErrorTextReachesStderrWithoutEscapes) {
  const std::string hostile =
      "\x1b[31mred\x1b[0m \x1b]0;pwned\x07 \x9b"
      "2J \xc2\x9b"
      "2J \x08\x08";
  ScriptedHttpServer server([&server, &hostile](int fd, const std::string&) {
    server.Send(fd, HttpResponse(500, hostile, "text/plain"));
  });
  for (const auto& args : EveryCommand(server.url())) {
    const CliResult r = RunCli(args, 20s);
    EXPECT_EQ(r.exit_code, 1) << Joined(args) << "\n" << r.err;
    EXPECT_EQ(r.err.find(kEsc), std::string::npos) << Joined(args);
    EXPECT_EQ(r.err.find('\x07'), std::string::npos) << Joined(args);
    EXPECT_EQ(r.err.find('\x08'), std::string::npos) << Joined(args);
    EXPECT_EQ(r.err.find('\x9b'), std::string::npos) << Joined(args);
    EXPECT_THAT(r.err, HasSubstr("\\x1b[31mred")) << Joined(args);
  }
}

TEST(CliSanitizeTest, ReportTableShowsServerNamesWithoutEscapes) {
  const nlohmann::json report = {
      {"node", "node-a\x1b[2J"},
      {"generated_at", "2024-01-01T00:00:00Z"},
      {"diagnoses", nlohmann::json::array()},
      {"jobs",
       {{{"namespace", "training\x1b]0;x\x07"},
         {"training_job", "ctr\x1b[31m"},
         {"ps", {"ctr-ps-0\x1b[5m"}},
         {"workers", {"w\x1b"}},
         {"ps_traffic_share", {{"ctr-ps-0\x1b[5m", 1.0}}}}}}};
  ScriptedHttpServer server([&server, &report](int fd, const std::string&) {
    server.Send(fd, HttpResponse(200, report.dump()));
  });
  const CliResult r = RunCli({"report", "--agent", server.url()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("node-a\\x1b[2J"));
  EXPECT_EQ(r.out.find(kEsc), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('\x07'), std::string::npos) << r.out;
}

TEST(CliNumbersTest, NonNumericPrometheusValueIsAnErrorNamingTheSeries) {
  const std::string answer = R"({"status":"success","data":{
      "resultType":"matrix","result":[{"metric":{"namespace":"training",
      "pod":"ctr-ps-0"},"values":[[1700000000,"abc"]]}]}})";
  ScriptedHttpServer server([&server, &answer](int fd, const std::string&) {
    server.Send(fd, HttpResponse(200, answer));
  });
  // One cluster: no cluster listing first (it wants a vector).
  const CliResult r = RunCli({"report", "--prometheus", server.url(),
                              "--batch-series", "0", "--cluster-label", ""});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("sample value 'abc' that is not a number"));
  EXPECT_THAT(r.err, HasSubstr("pod=\"ctr-ps-0\""));
  EXPECT_TRUE(r.out.empty()) << r.out;
}

}  // namespace
}  // namespace trainscope::testing
