#include "profiler/top_functions.h"

#include <gtest/gtest.h>

namespace trainscope::profiler {
namespace {

using Clock = TopFunctionWindow::Clock;
using namespace std::chrono_literals;

TEST(TopFunctionWindowTest, SumsDrainsAndRanksByShare) {
  TopFunctionWindow w(300s, 32);
  const auto t0 = Clock::now();
  w.Add(t0, {{"pod-a", {{"f", 3}, {"g", 1}}}, {"pod-b", {{"h", 5}}}});
  w.Add(t0 + 5s, {{"pod-a", {{"f", 3}, {"h", 3}}}});
  auto top = w.TopOf("pod-a", 10, t0 + 6s);
  EXPECT_EQ(top.samples, 10);
  ASSERT_EQ(top.functions.size(), 3u);
  EXPECT_EQ(top.functions[0].function, "f");
  EXPECT_EQ(top.functions[0].samples, 6);
  EXPECT_DOUBLE_EQ(top.functions[0].share, 0.6);
  EXPECT_EQ(top.functions[1].function, "h");
  EXPECT_NEAR(top.window_seconds, 6, 1e-6);
  EXPECT_EQ(w.TopOf("pod-a", 1, t0 + 6s).functions.size(), 1u);
  EXPECT_EQ(w.TopOf("nobody", 5, t0 + 6s).samples, 0);
}

TEST(TopFunctionWindowTest, OldDrainsExpire) {
  TopFunctionWindow w(60s, 32);
  const auto t0 = Clock::now();
  w.Add(t0, {{"p", {{"old", 100}}}});
  w.Add(t0 + 50s, {{"p", {{"new", 1}}}});
  auto top = w.TopOf("p", 5, t0 + 70s);
  EXPECT_EQ(top.samples, 1);
  ASSERT_EQ(top.functions.size(), 1u);
  EXPECT_EQ(top.functions[0].function, "new");
  EXPECT_EQ(w.drains(), 1u);
}

TEST(TopFunctionWindowTest, EachDrainKeepsABoundedNumberOfFunctions) {
  TopFunctionWindow w(300s, 2);
  std::map<std::string, int64_t> many;
  for (int i = 0; i < 100; ++i) many["fn" + std::to_string(i)] = i < 2 ? 50 : 1;
  w.Add(Clock::now(), {{"p", many}});
  auto top = w.TopOf("p", 10, Clock::now());
  EXPECT_EQ(top.samples, 198);  // nothing lost: the tail is "[other]"
  ASSERT_EQ(top.functions.size(), 3u);
  EXPECT_EQ(top.functions[0].function, "[other]");  // 98 samples of the tail
  EXPECT_EQ(top.functions[0].samples, 98);
  EXPECT_EQ(top.functions[1].samples, 50);
}

}  // namespace
}  // namespace trainscope::profiler
