#include "node/node_parse.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

TEST(ParseProcStatTest, Table) {
  struct Case {
    const char* name;
    const char* text;
    bool ok;
    double busy, idle;
    unsigned cpus;
  } cases[] = {
      {"two cpus",
       "cpu  1614 10 638 65417 741 3 22 2 7 0\n"
       "cpu0 417 0 234 33527 22 0 6 0 0 0\n"
       "cpu1 1196 0 404 31890 718 0 16 1 0 0\nintr 1 2\n",
       true, (1614 + 10 + 638 + 3 + 22 + 2) / 100.0, (65417 + 741) / 100.0, 2},
      {"old kernel without guest columns", "cpu 100 0 100 800 0 0 0 0\n", true,
       2.0, 8.0, 0},
      {"truncated", "cpu 1 2 3\n", false, 0, 0, 0},
      {"garbage", "cpu a b c d e f g h\n", false, 0, 0, 0},
      {"no cpu line", "intr 1\n", false, 0, 0, 0},
      {"empty", "", false, 0, 0, 0},
  };
  for (const auto& c : cases) {
    auto got = ParseProcStat(c.text, 100);
    ASSERT_EQ(got.has_value(), c.ok) << c.name;
    if (!got) continue;
    EXPECT_DOUBLE_EQ(got->busy_seconds, c.busy) << c.name;
    EXPECT_DOUBLE_EQ(got->idle_seconds, c.idle) << c.name;
    EXPECT_EQ(got->cpu_count, c.cpus) << c.name;
  }
  EXPECT_FALSE(ParseProcStat("cpu 1 1 1 1 1 1 1 1\n", 0).has_value());
}

TEST(ParseMemInfoTest, Table) {
  auto info = ParseMemInfo(
      "MemTotal:       24000000 kB\nMemFree:  100 kB\n"
      "MemAvailable:   12000000 kB\nHugePages_Total: 0\n");
  EXPECT_EQ(info.total_bytes, 24000000ull * 1024);
  EXPECT_EQ(info.available_bytes, 12000000ull * 1024);
  auto broken = ParseMemInfo("MemTotal: lots kB\n");
  EXPECT_FALSE(broken.total_bytes.has_value());
  EXPECT_FALSE(broken.available_bytes.has_value());
}

TEST(ParseLinkSpeedTest, Table) {
  struct Case {
    const char* text;
    std::optional<double> want;
  } cases[] = {
      {"1000\n", 125e6},     {"25000", 25000 * 1e6 / 8}, {"-1\n", std::nullopt},
      {"0\n", std::nullopt}, {"", std::nullopt},         {"fast", std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ParseLinkSpeedBytesPerSecond(c.text), c.want) << c.text;
  }
}

}  // namespace
}  // namespace trainscope
