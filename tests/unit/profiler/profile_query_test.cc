#include <gtest/gtest.h>

#include "profile_endpoint.h"

namespace trainscope {
namespace {

struct Case {
  std::map<std::string, std::string> query;
  bool ok;
  const char* error_fragment;
};

class ProfileQueryTest : public ::testing::TestWithParam<Case> {};

TEST_P(ProfileQueryTest, ChecksEveryParameter) {
  HttpRequest req;
  req.query = GetParam().query;
  profiler::ProfilerOptions limits;  // 60 s, 1000 Hz
  ProfileQuery q;
  std::string error;
  EXPECT_EQ(ParseProfileQuery(req, limits, &q, &error), GetParam().ok) << error;
  EXPECT_NE(error.find(GetParam().error_fragment), std::string::npos) << error;
}

const std::map<std::string, std::string> kPod = {{"namespace", "ns"},
                                                 {"pod", "p"}};

std::map<std::string, std::string> With(
    std::map<std::string, std::string> extra) {
  extra.insert(kPod.begin(), kPod.end());
  return extra;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ProfileQueryTest,
    ::testing::Values(
        Case{kPod, true, ""}, Case{With({{"seconds", "30"}}), true, ""},
        Case{With({{"seconds", "2.5"}, {"type", "offcpu"}}), true, ""},
        Case{With({{"hz", "49"}, {"format", "svg"}}), true, ""},
        // A pod found by --discovery cgroup: no namespace, its UID as name.
        Case{{{"pod", "0f3c-uid"}}, true, ""},
        Case{{{"namespace", "ns"}}, false, "pod is required"},
        Case{{}, false, "--discovery cgroup: ?pod=UID"},
        Case{With({{"seconds", "abc"}}), false, "seconds must be"},
        Case{With({{"seconds", "0"}}), false, "seconds must be"},
        Case{With({{"seconds", "61"}}), false, "--profile-max-seconds"},
        Case{With({{"seconds", "nan"}}), false, "seconds must be"},
        Case{With({{"type", "wall"}}), false, "type must be cpu or offcpu"},
        Case{With({{"hz", "0"}}), false, "hz must be"},
        Case{With({{"hz", "5000"}}), false, "hz must be"},
        Case{With({{"hz", "9x"}}), false, "hz must be"},
        Case{With({{"format", "json"}}), false, "format must be"}));

TEST(ProfileQueryDefaultsTest, TenSecondsCpuAt99HzPprof) {
  HttpRequest req;
  req.query = kPod;
  ProfileQuery q;
  std::string error;
  ASSERT_TRUE(ParseProfileQuery(req, {}, &q, &error));
  EXPECT_EQ(q.request.seconds, 10);
  EXPECT_EQ(q.request.kind, profiler::ProfileKind::kCpu);
  EXPECT_EQ(q.request.hz, 99);
  EXPECT_EQ(q.format, "pprof");
  EXPECT_EQ(q.request.namespace_name, "ns");
  EXPECT_EQ(q.request.pod, "p");
}

}  // namespace
}  // namespace trainscope

namespace trainscope {
namespace {

TEST(TopFunctionsEvidenceTest, RoundedSharesInRankOrderOrNullWhenEmpty) {
  profiler::TopFunctionWindow::Top top;
  EXPECT_TRUE(TopFunctionsEvidence(top).is_null());
  top.samples = 3;
  top.window_seconds = 299.6;
  top.functions = {{"serialize", 2, 2.0 / 3}, {"memcpy", 1, 1.0 / 3}};
  const nlohmann::json e = TopFunctionsEvidence(top);
  ASSERT_EQ(e["top_functions"].size(), 2u);
  EXPECT_EQ(e["top_functions"][0]["function"], "serialize");
  EXPECT_DOUBLE_EQ(e["top_functions"][0]["share"].get<double>(), 0.667);
  EXPECT_EQ(e["top_functions"][1]["samples"], 1);
  EXPECT_EQ(e["profile_samples"], 3);
  EXPECT_DOUBLE_EQ(e["profile_window_seconds"].get<double>(), 300);
}

}  // namespace
}  // namespace trainscope

namespace trainscope {
namespace {

TEST(WaitSitesEvidenceTest, SecondsAndSharesOrNullWhenEmpty) {
  profiler::TopFunctionWindow::Top top;
  EXPECT_TRUE(WaitSitesEvidence(top).is_null());
  top.samples = 3'000'000'000;  // nanoseconds
  top.functions = {{"blocked recv", 2'000'000'000, 2.0 / 3},
                   {"runnable step", 1'000'000'000, 1.0 / 3}};
  const nlohmann::json e = WaitSitesEvidence(top);
  ASSERT_EQ(e["top_wait_sites"].size(), 2u);
  EXPECT_EQ(e["top_wait_sites"][0]["site"], "blocked recv");
  EXPECT_DOUBLE_EQ(e["top_wait_sites"][0]["seconds"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(e["top_wait_sites"][1]["share"].get<double>(), 0.333);
  EXPECT_DOUBLE_EQ(e["offcpu_seconds"].get<double>(), 3.0);
}

}  // namespace
}  // namespace trainscope
