#include "procnet/net_dev.h"

#include <gtest/gtest.h>

namespace trainscope {
namespace {

constexpr const char* kHeader =
    "Inter-|   Receive                                                |  "
    "Transmit\n"
    " face |bytes    packets errs drop fifo frame compressed multicast|bytes "
    "   packets errs drop fifo colls carrier compressed\n";

TEST(ParseNetDevTest, Table) {
  struct Case {
    const char* name;
    std::string text;
    size_t want_lines;
    uint64_t want_rx_bytes_sum_non_lo;
    uint64_t want_tx_drops_sum_non_lo;
  } cases[] = {
      {"empty", "", 0, 0, 0},
      {"header only", kHeader, 0, 0, 0},
      {"loopback excluded",
       std::string(kHeader) +
           "    lo:    3267      29    0    0    0     0          0         0  "
           "   3267      29    0    0    0     0       0          0\n"
           "  eth0: 49766989    1202    1    2    0     0          0         0 "
           "   49085     593    3    4    0     0       0          0\n",
       2, 49766989, 4},
      {"two pod interfaces summed",
       std::string(kHeader) +
           "  eth0: 100 1 0 0 0 0 0 0 200 2 0 1 0 0 0 0\n"
           "  net1: 1000 10 0 0 0 0 0 0 2000 20 0 2 0 0 0 0\n",
       2, 1100, 3},
      {"name glued to the colon",
       std::string(kHeader) +
           "eth0:18446744073709551615 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n",
       1, 18446744073709551615ull, 0},
      {"short and garbage lines skipped",
       std::string(kHeader) + "  eth0: 1 2 3\n  eth1: a b c d e f g h i j k l "
                              "m n o p\nno colon here\n : 1 2\n",
       0, 0, 0},
      {"overflowing number skipped",
       std::string(kHeader) +
           "  eth0: 99999999999999999999 1 0 0 0 0 0 0 5 1 0 0 0 0 0 0\n",
       0, 0, 0},
  };
  for (const auto& c : cases) {
    auto lines = ParseNetDev(c.text);
    EXPECT_EQ(lines.size(), c.want_lines) << c.name;
    auto sum = SumExceptLoopback(lines);
    EXPECT_EQ(sum.receive_bytes, c.want_rx_bytes_sum_non_lo) << c.name;
    EXPECT_EQ(sum.transmit_drops, c.want_tx_drops_sum_non_lo) << c.name;
  }
}

TEST(ParseNetDevTest, MapsEveryColumn) {
  auto lines = ParseNetDev(std::string(kHeader) +
                           "  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n");
  ASSERT_EQ(lines.size(), 1u);
  const auto& c = lines[0].counters;
  EXPECT_EQ(lines[0].device, "eth0");
  EXPECT_EQ(c.receive_bytes, 1u);
  EXPECT_EQ(c.receive_packets, 2u);
  EXPECT_EQ(c.receive_errors, 3u);
  EXPECT_EQ(c.receive_drops, 4u);
  EXPECT_EQ(c.transmit_bytes, 9u);
  EXPECT_EQ(c.transmit_packets, 10u);
  EXPECT_EQ(c.transmit_errors, 11u);
  EXPECT_EQ(c.transmit_drops, 12u);
}

}  // namespace
}  // namespace trainscope
