#include "exporter/process_stat.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <ctime>
#include <vector>

#include "trainscope/unique_fd.h"

namespace trainscope {
namespace {

// A real line's shape: pid, (comm), state, then fields 4..52.
std::string StatLine(const std::string& comm) {
  return "4242 (" + comm +
         ") S 1 4242 4242 0 -1 4194560 1200 0 0 0 "  // fields 4..13
         "350 150 0 0 20 0 9 0 "                     // utime 14 .. 21
         "12000 123456789 2500 "                     // starttime, vsize, rss
         "18446744073709551615 1 1 0 0 0 0 0 4096 0 0 0 17 1 0 0 0 0 0\n";
}

TEST(ProcessStatTest, ParsesTheFieldsExportersShare) {
  struct Case {
    const char* name;
    std::string line;
  } cases[] = {
      {"plain", StatLine("trainscope-agen")},
      {"spaces and parentheses in the name", StatLine("a (b) c")},
      {"a name that is only a parenthesis", StatLine(")")},
  };
  for (const auto& c : cases) {
    const ProcessStat s = ParseProcStat(c.line, 100, 4096, 1.7e9);
    ASSERT_TRUE(s.cpu_seconds) << c.name;
    EXPECT_DOUBLE_EQ(*s.cpu_seconds, 5.0) << c.name;
    EXPECT_DOUBLE_EQ(*s.resident_bytes, 2500.0 * 4096) << c.name;
    EXPECT_DOUBLE_EQ(*s.virtual_bytes, 123456789) << c.name;
    EXPECT_DOUBLE_EQ(*s.start_time_seconds, 1.7e9 + 120) << c.name;
    EXPECT_EQ(s.state, 'S') << c.name;
  }
}

TEST(ProcessStatTest, WhatCannotBeReadStaysEmpty) {
  EXPECT_FALSE(ParseProcStat("", 100, 4096, 1.7e9).cpu_seconds);
  EXPECT_FALSE(ParseProcStat("", 100, 4096, 1.7e9).state);
  // Only the state, as a process reads in its first instant.
  EXPECT_EQ(ParseProcStat("4242 (x) D", 100, 4096, 1.7e9).state, 'D');
  EXPECT_FALSE(ParseProcStat("4242 (x) DD 1", 100, 4096, 1.7e9).state);
  EXPECT_FALSE(ParseProcStat("4242 (x) S 1 2", 100, 4096, 1.7e9).cpu_seconds);
  // Without a boot time, no start time; the rest is still read.
  const ProcessStat s = ParseProcStat(StatLine("x"), 100, 4096, std::nullopt);
  EXPECT_FALSE(s.start_time_seconds);
  EXPECT_TRUE(s.resident_bytes);
  // A field that is not a number.
  std::string bad = StatLine("x");
  bad.replace(bad.find("350"), 3, "3x0");
  EXPECT_FALSE(ParseProcStat(bad, 100, 4096, 1.7e9).cpu_seconds);
}

TEST(ProcessStatTest, BootTime) {
  EXPECT_EQ(ParseBootTime("cpu  1 2 3\nintr 5\nbtime 1764300000\nprocs 3\n"),
            1764300000.0);
  EXPECT_FALSE(ParseBootTime("cpu 1 2\n"));
  EXPECT_FALSE(ParseBootTime("btime soon\n"));
}

// The real process: its descriptors, limit and start time are plausible.
TEST(ProcessStatTest, ThisProcess) {
  const ProcessStat s = ReadSelfProcessStat();
  ASSERT_TRUE(s.open_fds);
  EXPECT_GE(*s.open_fds, 3);  // stdin, stdout, stderr
  ASSERT_TRUE(s.start_time_seconds);
  EXPECT_LE(*s.start_time_seconds, static_cast<double>(std::time(nullptr)) + 1);
  EXPECT_GT(*s.start_time_seconds, 1.5e9);
  ASSERT_TRUE(s.virtual_bytes);
  EXPECT_GE(*s.virtual_bytes, *s.resident_bytes);
}

// Counted exactly, however it is counted (the size of /proc/self/fd on
// Linux 6.2 and later, a listing before).
TEST(ProcessStatTest, OpenDescriptorsAreCountedExactly) {
  const auto before = ReadSelfProcessStat().open_fds;
  ASSERT_TRUE(before);
  std::vector<UniqueFd> opened;
  for (int i = 0; i < 40; ++i) opened.emplace_back(::dup(STDERR_FILENO));
  const auto during = ReadSelfProcessStat().open_fds;
  ASSERT_TRUE(during);
  EXPECT_EQ(*during, *before + 40);
}

}  // namespace
}  // namespace trainscope
