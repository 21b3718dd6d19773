// What the CLI prints of a server's text (agent/cli/server_text.h) and how
// strictly it reads numbers (include/trainscope/strict_number.h): no terminal
// escape sequence gets through, and "abc" is no sample value.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>

#include "cli/report_http.h"
#include "cli/report_prometheus.h"
#include "cli/server_text.h"
#include "cli_test_server.h"
#include "trainscope/strict_number.h"

namespace trainscope::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ScriptedHttpServer;

// Bytes a terminal acts on: C0 controls, DEL, and C1 controls raw or as
// UTF-8 (U+0080..U+009F: C2 80..C2 9F).
bool HasTerminalControl(const std::string& text) {
  for (size_t i = 0; i < text.size(); ++i) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b < 0x20 && b != '\n') return true;
    if (b == 0x7F) return true;
    if (b >= 0x80 && b <= 0x9F &&
        (i == 0 || static_cast<unsigned char>(text[i - 1]) != 0xC2)) {
      return true;  // a raw C1 byte, not a UTF-8 continuation
    }
    if (b == 0xC2 && i + 1 < text.size() &&
        static_cast<unsigned char>(text[i + 1]) <= 0x9F) {
      return true;
    }
  }
  return false;
}

TEST(ServerTextTest, EscapesControlsAndKeepsText) {
  EXPECT_EQ(ServerText("\x1b[31mred\x1b[0m"), "\\x1b[31mred\\x1b[0m");
  EXPECT_EQ(ServerText("a\tb\nc\rd\x07\x7f"), "a\\x09b\\x0ac\\x0dd\\x07\\x7f");
  EXPECT_EQ(ServerText("plain words, kept"), "plain words, kept");
  EXPECT_EQ(ServerText("caf\xc3\xa9 \xe6\x97\xa5"), "caf\xc3\xa9 \xe6\x97\xa5");
  // C1 CSI raw (not UTF-8) and as UTF-8; a bidi override; a cut sequence.
  EXPECT_EQ(ServerText("\x9b"
                       "2J"),
            "\\x9b2J");
  EXPECT_EQ(ServerText("\xc2\x9b"
                       "2J"),
            "\\u{009b}2J");
  EXPECT_EQ(ServerText("a\xe2\x80\xae"
                       "b"),
            "a\\u{202e}b");
  EXPECT_EQ(ServerText("x\xe2\x80"), "x\\xe2\\x80");
  EXPECT_EQ(ServerText("trailing newline\n\n"), "trailing newline");
}

TEST(ServerTextTest, CapsTheLength) {
  const std::string text = ServerText(std::string(10000, 'a'), 100);
  EXPECT_LE(text.size(), 100u + 20u);
  EXPECT_THAT(text, HasSubstr("... (10000 bytes)"));
  // An escape is never cut in half.
  const std::string escapes = ServerText(std::string(100, '\x1b'), 10);
  EXPECT_THAT(escapes, ::testing::StartsWith("\\x1b\\x1b..."));
}

TEST(ServerTextTest, JsonCopyCleansKeysAndValues) {
  const auto clean = ServerTextJson(nlohmann::json{
      {"node", "n\x1b[2J"}, {"share", {{"ps\x1b", 0.5}}}, {"n", 3}});
  EXPECT_EQ(clean["node"], "n\\x1b[2J");
  EXPECT_TRUE(clean["share"].contains("ps\\x1b"));
  EXPECT_EQ(clean["n"], 3);
}

// Error bodies reach stderr through GetJson's message.
class ServerErrorTextTest
    : public ::testing::TestWithParam<std::pair<int, std::string>> {};

TEST_P(ServerErrorTextTest, MessageHasNoTerminalControl) {
  const auto& [status, body] = GetParam();
  ScriptedHttpServer server(
      [&server, status = status, body = body](int fd, const std::string&) {
        server.Send(fd, testing::HttpResponse(status, body, "text/plain"));
      });
  HttpTarget target;
  ASSERT_TRUE(ParseHttpUrl(server.url(), &target).ok());
  nlohmann::json out;
  const Status s = GetJson(target, "/api/v1/report", {}, &out);
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(HasTerminalControl(s.message())) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("\\x1b[31m"));
  EXPECT_LT(s.message().size(), 600u);
}

INSTANTIATE_TEST_SUITE_P(
    Bodies, ServerErrorTextTest,
    ::testing::Values(
        // A plain-text error body with ESC, BEL, a C1 CSI and a bidi override.
        std::make_pair(500, std::string("\x1b[31mboom\x07\x9b"
                                        "2J\xe2\x80\xae"
                                        "\n") +
                                std::string(5000, 'z')),
        // Prometheus's JSON error field ("\u001b" decodes to ESC).
        std::make_pair(400,
                       std::string(R"({"status":"error","error":)"
                                   R"("\u001b[31mbad\u0007 query\u009b"})")),
        // A 200 that is not JSON: the body's start is quoted.
        std::make_pair(200, std::string("\x1b[31m<html>\x1b]0;title\x07"))),
    [](const auto& param_info) {
      return "status_" + std::to_string(param_info.param.first);
    });

TEST(PrometheusValueTest, ReadsWhatPrometheusWrites) {
  EXPECT_EQ(ParsePrometheusValue("12"), 12);
  EXPECT_EQ(ParsePrometheusValue("-0.5"), -0.5);
  EXPECT_EQ(ParsePrometheusValue("1.5e-07"), 1.5e-07);
  EXPECT_EQ(ParsePrometheusValue("1e+21"), 1e21);
  EXPECT_EQ(ParsePrometheusValue("3E2"), 300);
  EXPECT_TRUE(std::isnan(*ParsePrometheusValue("NaN")));
  EXPECT_EQ(ParsePrometheusValue("+Inf"), INFINITY);
  EXPECT_EQ(ParsePrometheusValue("-Inf"), -INFINITY);
}

TEST(PrometheusValueTest, RefusesEverythingElse) {
  for (const char* text :
       {"", "abc", "12abc", " 1", "1 ", "0x10", "inf", "nan", "infinity", "1,5",
        "1e", "e5", "--1", "+-1", ".", "1e999", "1.2.3",
        "\xe2\x80\xae"
        "1"}) {
    EXPECT_FALSE(ParsePrometheusValue(text).has_value()) << text;
  }
}

TEST(PrometheusValueTest, NonNumericSampleIsAnErrorNamingTheSeries) {
  std::map<std::string, nlohmann::json> results;
  results["cpu"] = nlohmann::json::parse(R"([
    {"metric": {"__name__": "trainscope_pod_cpu_usage_seconds_total",
                "namespace": "training", "pod": "ctr-ps-0"},
     "values": [[1700000000, "1.5"], [1700000015, "abc"]]}])");
  diagnosis::Window window;
  const Status s = WindowFromMatrices(results, &window);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("'abc'"));
  EXPECT_THAT(s.message(), HasSubstr("pod=\"ctr-ps-0\""));
  EXPECT_THAT(s.message(), HasSubstr("trainscope_pod_cpu_usage_seconds_total"));
}

TEST(PrometheusValueTest, NaNAndInfAreGapsNotErrors) {
  std::map<std::string, nlohmann::json> results;
  results["cpu"] = nlohmann::json::parse(R"([
    {"metric": {"namespace": "training", "pod": "ctr-ps-0"},
     "values": [[1, "NaN"], [2, "+Inf"], [3, "2"]]}])");
  diagnosis::Window window;
  ASSERT_TRUE(WindowFromMatrices(results, &window).ok());
  ASSERT_EQ(window.pods.size(), 1u);
  EXPECT_EQ(window.pods.begin()->second.points.size(), 1u);
}

TEST(StrictNumberTest, WholeNumbersAreDecimalOnly) {
  EXPECT_EQ(ParseWholeNumber("0"), 0u);
  EXPECT_EQ(ParseWholeNumber("65536"), 65536u);
  for (const char* text :
       {"-1", "010", "0x10", "1e3", " 1", "", "1.0", "99999999999999999999"}) {
    EXPECT_FALSE(ParseWholeNumber(text).has_value()) << text;
  }
  EXPECT_EQ(ParseDecimal("2.5"), 2.5);
  for (const char* text : {"nan", "inf", "-1", "1e400", "0x1p3", "+1"}) {
    EXPECT_FALSE(ParseDecimal(text).has_value()) << text;
  }
}

}  // namespace
}  // namespace trainscope::cli
