#include "log_format.h"

#include <gtest/gtest.h>
#include <spdlog/logger.h>
#include <spdlog/sinks/ostream_sink.h>

#include <nlohmann/json.hpp>
#include <sstream>

namespace trainscope {
namespace {

// What a logger with the JSON formatter writes for `message`, parsed.
nlohmann::json LoggedAs(const std::string& message,
                        spdlog::level::level_enum level = spdlog::level::warn) {
  std::ostringstream out;
  auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
  spdlog::logger logger("test", sink);
  logger.set_formatter(std::make_unique<JsonLogFormatter>());
  logger.log(level, message);
  const std::string line = out.str();
  EXPECT_EQ(line.back(), '\n');
  EXPECT_EQ(line.find('\n'), line.size() - 1) << "one line: " << line;
  return nlohmann::json::parse(line);
}

TEST(JsonLogFormatterTest, OneObjectPerLineWithTheComponent) {
  struct Case {
    const char* message;
    const char* component;
    const char* msg;
  } cases[] = {
      {"[diagnosis] hot_parameter_server entered", "diagnosis",
       "hot_parameter_server entered"},
      {"[flows/ebpf] attached", "flows/ebpf", "attached"},
      {"no tag here", "", "no tag here"},
      {"[a tag with spaces] stays", "", "[a tag with spaces] stays"},
      {"[] empty", "", "[] empty"},
      {"quotes \" and\nnew lines", "", "quotes \" and\nnew lines"},
  };
  for (const auto& c : cases) {
    const nlohmann::json j = LoggedAs(c.message);
    EXPECT_EQ(j["component"], c.component) << c.message;
    EXPECT_EQ(j["msg"], c.msg) << c.message;
    EXPECT_EQ(j["level"], "warning") << c.message;
  }
}

TEST(JsonLogFormatterTest, TimeIsUtcWithMilliseconds) {
  const std::string ts = LoggedAs("[x] y", spdlog::level::info)["ts"];
  ASSERT_EQ(ts.size(), 24u) << ts;  // 2026-11-28T07:55:01.123Z
  EXPECT_EQ(ts[10], 'T');
  EXPECT_EQ(ts[19], '.');
  EXPECT_EQ(ts.back(), 'Z');
}

TEST(JsonLogFormatterTest, BytesThatAreNotUtf8DoNotBreakTheLine) {
  const nlohmann::json j = LoggedAs("[http] bad \xff\xfe path");
  EXPECT_EQ(j["component"], "http");
  EXPECT_EQ(j["msg"], "bad \xEF\xBF\xBD\xEF\xBF\xBD path");
}

}  // namespace
}  // namespace trainscope
