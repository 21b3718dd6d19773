#include "cgroup/cgroup_parse.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

namespace trainscope::cgroup {
namespace {

using U = std::optional<uint64_t>;
constexpr auto kNone = std::nullopt;

struct UintCase {
  std::string input;
  U want;
};

TEST(ParseUint, Table) {
  const std::vector<UintCase> cases = {
      {"0", 0},
      {"22358174382\n", 22358174382},
      {"  42 \n", 42},
      {"18446744073709551615", 18446744073709551615ull},
      {"18446744073709551616", kNone},  // overflow
      {"-1", kNone},
      {"", kNone},
      {"\n", kNone},
      {"12abc", kNone},
      {"abc", kNone},
      {"1 2", kNone},
      {"+5", kNone},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ParseUint(c.input), c.want) << "input: '" << c.input << "'";
  }
}

constexpr std::string_view kV2CpuStat =
    "usage_usec 21887702\nuser_usec 15859430\nsystem_usec 6028271\n"
    "nr_periods 120\nnr_throttled 30\nthrottled_usec 4500000\n";
constexpr std::string_view kV1MemoryStat =
    "cache 14286848\nrss 4116480\ninactive_file 1044480\n"
    "hierarchical_memory_limit 9223372036854771712\n"
    "total_rss 7086080\ntotal_inactive_file 177160192\n";

struct FlatCase {
  std::string name;
  std::string content;
  std::string key;
  U want;
};

TEST(FlatKeyedValue, Table) {
  const std::vector<FlatCase> cases = {
      {"v2 cpu.stat first", std::string(kV2CpuStat), "usage_usec", 21887702},
      {"v2 cpu.stat last", std::string(kV2CpuStat), "throttled_usec", 4500000},
      {"prefix of another key", std::string(kV2CpuStat), "usage", kNone},
      {"v1 memory.stat local", std::string(kV1MemoryStat), "rss", 4116480},
      {"v1 memory.stat total", std::string(kV1MemoryStat), "total_rss",
       7086080},
      {"huge value", std::string(kV1MemoryStat), "hierarchical_memory_limit",
       9223372036854771712ull},
      {"missing key", std::string(kV2CpuStat), "nr_bursts", kNone},
      {"oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 7\n",
       "oom_kill", 7},
      {"old oom_control", "oom_kill_disable 0\nunder_oom 0\n", "oom_kill",
       kNone},
      {"memory.events", "low 0\nhigh 5\nmax 9\noom 2\noom_kill 2\n", "high", 5},
      {"empty", "", "usage_usec", kNone},
      {"negative", "usage_usec -5\n", "usage_usec", kNone},
      {"overflow", "usage_usec 99999999999999999999\n", "usage_usec", kNone},
      {"garbage value", "usage_usec lots\n", "usage_usec", kNone},
      {"extra field", "usage_usec 5 6\n", "usage_usec", kNone},
      {"no trailing newline", "a 1\nb 2", "b", 2},
      {"crlf and blank lines", "\n\na 1\r\n\nb 2\r\n", "b", 2},
      {"binary garbage", std::string("\x01\xff\x00 3", 5), "usage_usec", kNone},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(FlatKeyedValue(c.content, c.key), c.want) << c.name;
  }
}

struct BandwidthCase {
  std::string name;
  std::string quota;   // cpu.max content, or cfs_quota_us for v1
  std::string period;  // v1 only
  bool parses;
  std::optional<double> cores;
};

TEST(ParseCpuMax, Table) {
  const std::vector<BandwidthCase> cases = {
      {"unlimited", "max 100000\n", "", true, std::nullopt},
      {"half core", "50000 100000\n", "", true, 0.5},
      {"two cores", "200000 100000", "", true, 2.0},
      {"short period", "25000 50000\n", "", true, 0.5},
      {"zero period", "50000 0\n", "", false, std::nullopt},
      {"zero quota", "0 100000\n", "", false, std::nullopt},
      {"negative quota", "-1 100000\n", "", false, std::nullopt},
      {"missing period", "max\n", "", false, std::nullopt},
      {"three fields", "1 2 3\n", "", false, std::nullopt},
      {"empty", "", "", false, std::nullopt},
      {"garbage", "max max\n", "", false, std::nullopt},
      {"overflow", "99999999999999999999 100000", "", false, std::nullopt},
  };
  for (const auto& c : cases) {
    const auto got = ParseCpuMax(c.quota);
    ASSERT_EQ(got.has_value(), c.parses) << c.name;
    if (!got) continue;
    ASSERT_EQ(got->cores().has_value(), c.cores.has_value()) << c.name;
    if (c.cores) {
      EXPECT_DOUBLE_EQ(*got->cores(), *c.cores) << c.name;
    }
  }
}

TEST(ParseCfsBandwidth, Table) {
  const std::vector<BandwidthCase> cases = {
      {"unlimited", "-1\n", "100000\n", true, std::nullopt},
      {"one and a half", "150000\n", "100000\n", true, 1.5},
      {"custom period", "25000\n", "50000\n", true, 0.5},
      {"other negative", "-2\n", "100000\n", false, std::nullopt},
      {"zero quota", "0\n", "100000\n", false, std::nullopt},
      {"zero period", "100000\n", "0\n", false, std::nullopt},
      {"empty quota", "", "100000\n", false, std::nullopt},
      {"empty period", "100000", "", false, std::nullopt},
      {"garbage", "lots\n", "100000\n", false, std::nullopt},
  };
  for (const auto& c : cases) {
    const auto got = ParseCfsBandwidth(c.quota, c.period);
    ASSERT_EQ(got.has_value(), c.parses) << c.name;
    if (!got) continue;
    ASSERT_EQ(got->cores().has_value(), c.cores.has_value()) << c.name;
    if (c.cores) {
      EXPECT_DOUBLE_EQ(*got->cores(), *c.cores) << c.name;
    }
  }
}

struct LimitCase {
  std::string input;
  bool parses;
  U bytes;  // empty = unlimited
};

TEST(ParseMemoryMax, Table) {
  const std::vector<LimitCase> cases = {
      {"max\n", true, kNone},
      {"1073741824\n", true, 1073741824},
      {"0\n", true, 0},
      {"", false, kNone},
      {"-1\n", false, kNone},
      {"maximum\n", false, kNone},
      {"99999999999999999999\n", false, kNone},
  };
  for (const auto& c : cases) {
    const auto got = ParseMemoryMax(c.input);
    ASSERT_EQ(got.has_value(), c.parses) << c.input;
    if (got) {
      EXPECT_EQ(got->bytes, c.bytes) << c.input;
    }
  }
}

TEST(ParseMemoryLimitInBytes, Table) {
  const std::vector<LimitCase> cases = {
      {"9223372036854771712\n", true, kNone},  // 4 KiB pages
      {"9223372036854710272\n", true, kNone},  // 64 KiB pages
      {"4611686018427387904\n", true, kNone},  // exactly 2^62
      {"4611686018427383808\n", true, 4611686018427383808ull},
      {"536870912\n", true, 536870912},
      {"-1\n", false, kNone},
      {"max\n", false, kNone},
      {"", false, kNone},
  };
  for (const auto& c : cases) {
    const auto got = ParseMemoryLimitInBytes(c.input);
    ASSERT_EQ(got.has_value(), c.parses) << c.input;
    if (got) {
      EXPECT_EQ(got->bytes, c.bytes) << c.input;
    }
  }
}

struct IoCase {
  std::string name;
  std::string input;
  bool parses;
  uint64_t read = 0;
  uint64_t write = 0;
};

TEST(ParseIoStat, Table) {
  const std::vector<IoCase> cases = {
      {"two devices",
       "259:0 rbytes=1000 wbytes=200 rios=3 wios=4 dbytes=0 dios=0\n"
       "8:0 rbytes=24 wbytes=6 rios=1 wios=1 dbytes=0 dios=0\n",
       true, 1024, 206},
      {"empty is zero", "", true, 0, 0},
      {"iocost keys",
       "8:16 rbytes=5 wbytes=7 rios=1 wios=1 dbytes=0 dios=0 "
       "cost.vrate=135.04 cost.usage=1 cost.wait=0 cost.indebt=0\n",
       true, 5, 7},
      {"device without values", "8:0\n", true, 0, 0},
      {"garbage line", "hello world\n", false},
      {"bad device", "8-0 rbytes=1 wbytes=1\n", false},
      {"negative", "8:0 rbytes=-1 wbytes=1\n", false},
      {"missing equals", "8:0 rbytes 1\n", false},
      {"sum overflow",
       "8:0 rbytes=18446744073709551615 wbytes=0\n8:1 rbytes=1 wbytes=0\n",
       false},
  };
  for (const auto& c : cases) {
    const auto got = ParseIoStat(c.input);
    ASSERT_EQ(got.has_value(), c.parses) << c.name;
    if (!got) continue;
    EXPECT_EQ(got->read, c.read) << c.name;
    EXPECT_EQ(got->write, c.write) << c.name;
  }
}

TEST(ParseBlkioServiceBytes, Table) {
  const std::vector<IoCase> cases = {
      {"two devices",
       "8:0 Read 4096\n8:0 Write 512\n8:0 Sync 512\n8:0 Async 4096\n"
       "8:0 Discard 0\n8:0 Total 4608\n"
       "259:0 Read 100\n259:0 Write 10\n259:0 Total 110\nTotal 4718\n",
       true, 4196, 522},
      {"no io yet", "Total 0\n", true, 0, 0},
      {"empty", "", true, 0, 0},
      {"garbage", "Read all the things\n", false},
      {"bad value", "8:0 Read lots\nTotal 0\n", false},
      {"negative", "8:0 Write -3\n", false},
      {"bad total", "Total many\n", false},
      {"sum overflow", "8:0 Read 18446744073709551615\n8:16 Read 1\nTotal 0\n",
       false},
  };
  for (const auto& c : cases) {
    const auto got = ParseBlkioServiceBytes(c.input);
    ASSERT_EQ(got.has_value(), c.parses) << c.name;
    if (!got) continue;
    EXPECT_EQ(got->read, c.read) << c.name;
    EXPECT_EQ(got->write, c.write) << c.name;
  }
}

struct PsiCase {
  std::string name;
  std::string input;
  bool parses;
  std::optional<double> some;
  std::optional<double> full;
};

TEST(ParsePressure, Table) {
  const std::vector<PsiCase> cases = {
      {"some and full",
       "some avg10=0.14 avg60=0.08 avg300=0.20 total=1714555\n"
       "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n",
       true, 1.714555, 0.0},
      {"some only (cpu before 5.13)",
       "some avg10=0.00 avg60=0.00 avg300=0.00 total=6462285\n", true, 6.462285,
       std::nullopt},
      {"empty", "", false},
      {"full only", "full avg10=0.00 total=5\n", false},
      {"no total", "some avg10=0.00 avg60=0.00 avg300=0.00\n", false},
      {"negative total", "some avg10=0.00 total=-5\n", false},
      {"garbage", "pressure is high\n", false},
      {"duplicate some", "some total=1\nsome total=2\n", false},
      {"overflow", "some total=99999999999999999999\n", false},
  };
  for (const auto& c : cases) {
    const auto got = ParsePressure(c.input);
    ASSERT_EQ(got.has_value(), c.parses) << c.name;
    if (!got) continue;
    ASSERT_EQ(got->some_seconds.has_value(), c.some.has_value()) << c.name;
    if (c.some) {
      EXPECT_DOUBLE_EQ(*got->some_seconds, *c.some) << c.name;
    }
    ASSERT_EQ(got->full_seconds.has_value(), c.full.has_value()) << c.name;
    if (c.full) {
      EXPECT_DOUBLE_EQ(*got->full_seconds, *c.full) << c.name;
    }
  }
}

struct ProcsCase {
  std::string input;
  std::optional<std::vector<int>> want;
};

TEST(ParseCgroupProcs, Table) {
  const std::vector<ProcsCase> cases = {
      {"1001\n1002\n", std::vector<int>{1001, 1002}},
      {"", std::vector<int>{}},
      {"42", std::vector<int>{42}},
      {"0\n", std::nullopt},
      {"-1\n", std::nullopt},
      {"abc\n", std::nullopt},
      {"4294967296\n", std::nullopt},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(ParseCgroupProcs(c.input), c.want) << c.input;
  }
}

}  // namespace
}  // namespace trainscope::cgroup
