#include <gtest/gtest.h>

#include "http/flags.h"

namespace trainscope {
namespace {

HttpLimits Parse(std::vector<std::string> args) {
  CLI::App app;
  HttpLimits limits;
  AddHttpFlags(app, &limits);
  std::reverse(args.begin(), args.end());  // CLI11 takes them reversed
  app.parse(args);
  return limits;
}

TEST(HttpFlagsTest, DefaultsAreDocumentedValues) {
  HttpLimits limits = Parse({});
  EXPECT_EQ(limits.max_connections, 1024);
  EXPECT_EQ(limits.max_connections_per_ip, 128);
  EXPECT_EQ(limits.timeout, std::chrono::milliseconds(5000));
}

TEST(HttpFlagsTest, ParsesEachFlag) {
  HttpLimits limits =
      Parse({"--http-max-connections", "3000", "--http-max-connections-per-ip",
             "0", "--http-timeout", "2.5"});
  EXPECT_EQ(limits.max_connections, 3000);
  EXPECT_EQ(limits.max_connections_per_ip, 0);
  EXPECT_EQ(limits.timeout, std::chrono::milliseconds(2500));
}

TEST(HttpFlagsTest, RejectsOutOfRange) {
  EXPECT_THROW(Parse({"--http-max-connections", "0"}), CLI::ValidationError);
  EXPECT_THROW(Parse({"--http-timeout", "0"}), CLI::ValidationError);
}

}  // namespace
}  // namespace trainscope
