// `trainscope report`'s client flags: --selector, --header,
// --bearer-token-file, --ca-file.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "cli/report_http.h"
#include "cli/report_prometheus.h"
#include "cli/report_selector.h"

namespace trainscope::cli {
namespace {

using ::testing::HasSubstr;

struct SelectorCase {
  const char* name;
  std::vector<std::string> selectors;
  std::string matchers;  // canonical form, or the error's text
  bool ok;
};

class SelectorTest : public ::testing::TestWithParam<SelectorCase> {};

TEST_P(SelectorTest, ParsesOrRefusesClearly) {
  std::string matchers;
  Status s = ParseSelectors(GetParam().selectors, &matchers);
  if (GetParam().ok) {
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(matchers, GetParam().matchers);
  } else {
    ASSERT_FALSE(s.ok()) << matchers;
    EXPECT_THAT(s.message(), HasSubstr(GetParam().matchers));
  }
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SelectorTest,
    ::testing::Values(
        SelectorCase{"none", {}, "", true},
        SelectorCase{"one", {"cluster=\"a\""}, "cluster=\"a\"", true},
        SelectorCase{"spaces_braces",
                     {" { cluster = \"a\" , env=~'prod|stage', } "},
                     "cluster=\"a\",env=~\"prod|stage\"",
                     true},
        SelectorCase{"repeated",
                     {"cluster=\"a\"", "region!~\"eu.*\""},
                     "cluster=\"a\",region!~\"eu.*\"",
                     true},
        SelectorCase{"escapes",
                     {"path=\"a\\\\.b\\\"c\"", "raw=~`x\\.y`"},
                     "path=\"a\\\\.b\\\"c\",raw=~\"x\\\\.y\"",
                     true},
        SelectorCase{"unquoted", {"cluster=a"}, "must be quoted", false},
        SelectorCase{"no_operator", {"cluster"}, "expected =, !=", false},
        SelectorCase{"bad_name", {"1cluster=\"a\""}, "label name", false},
        SelectorCase{"unterminated", {"cluster=\"a"}, "unterminated", false},
        SelectorCase{"injection",
                     {"cluster=\"a\"} or vector(1) # "},
                     "unexpected '}",
                     false},
        SelectorCase{
            "unbalanced", {"{cluster=\"a\""}, "'{' without '}'", false},
        SelectorCase{"empty", {"  "}, "no label matcher", false},
        SelectorCase{"bad_escape", {"a=\"\\q\""}, "unsupported escape", false},
        SelectorCase{
            "missing_comma", {"a=\"1\" b=\"2\""}, "separated by ','", false}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(ClusterQueriesTest, SelectorGoesIntoEveryQuery) {
  const auto queries = ClusterQueries("training", "", "cluster=\"a\"");
  ASSERT_FALSE(queries.empty());
  for (const auto& q : queries) {
    // Each selector of the query (node_cpus has two) carries the matcher.
    size_t selectors = 0, with = 0;
    for (size_t at = 0; (at = q.promql.find('{', at)) != std::string::npos;
         ++at) {
      ++selectors;
      const size_t end = q.promql.find('}', at);
      if (q.promql.substr(at, end - at).find("cluster=\"a\"") !=
          std::string::npos) {
        ++with;
      }
    }
    EXPECT_GT(selectors, 0u) << q.promql;
    EXPECT_EQ(with, selectors) << q.promql;
  }
}

TEST(ClusterQueriesTest, NodeCpusReadsTheNewNameAndTheDeprecatedOne) {
  for (const auto& q : ClusterQueries("", "", "")) {
    if (q.name != "node_cpus") continue;
    EXPECT_EQ(q.promql, "trainscope_node_cpus or trainscope_node_cpu_count");
    return;
  }
  FAIL() << "no node_cpus query";
}

class ClientFlagsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("trainscope-client-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    ASSERT_TRUE(ParseHttpUrl("https://prom.example:9090/p", &target_).ok());
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::string Write(const std::string& name, const std::string& text) {
    const auto path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_;
  HttpTarget target_;
};

TEST_F(ClientFlagsTest, HeadersTokenAndCa) {
  HttpClientFlags flags{.bearer_token_file = Write("token", "abc.def\n"),
                        .ca_file = Write("ca.pem", "PEM"),
                        .headers = {"X-Scope-OrgID: team-a", "X-Empty:"}};
  ASSERT_TRUE(ApplyHttpClientFlags(flags, &target_).ok());
  EXPECT_THAT(
      target_.headers,
      ::testing::ElementsAre(
          std::pair<std::string, std::string>{"X-Scope-OrgID", "team-a"},
          std::pair<std::string, std::string>{"X-Empty", ""},
          std::pair<std::string, std::string>{"Authorization",
                                              "Bearer abc.def"}));
  EXPECT_EQ(target_.ca_file, flags.ca_file);
}

TEST_F(ClientFlagsTest, BadFlagsNameTheFlag) {
  struct Case {
    HttpClientFlags flags;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{.headers = {"NoColon"}}, "--header 'NoColon'"},
      {{.headers = {": value"}}, "--header ': value'"},
      {{.headers = {"Bad Name: v"}}, "--header 'Bad Name: v'"},
      {{.bearer_token_file = "/nonexistent/token"},
       "--bearer-token-file /nonexistent/token: cannot read"},
      {{.bearer_token_file = Write("empty", "\n")}, "expected one token"},
      {{.bearer_token_file = Write("two", "a\nb\n")}, "expected one token"},
      {{.ca_file = "/nonexistent/ca.pem"}, "--ca-file /nonexistent/ca.pem"},
  };
  for (const auto& c : cases) {
    HttpTarget target = target_;
    Status s = ApplyHttpClientFlags(c.flags, &target);
    ASSERT_FALSE(s.ok()) << c.message;
    EXPECT_THAT(s.message(), HasSubstr(c.message));
  }
  HttpTarget plain;
  ASSERT_TRUE(ParseHttpUrl("http://prom:9090", &plain).ok());
  Status s = ApplyHttpClientFlags({.ca_file = Write("ca2.pem", "x")}, &plain);
  EXPECT_THAT(s.message(), HasSubstr("needs an https:// URL"));
}

}  // namespace
}  // namespace trainscope::cli
