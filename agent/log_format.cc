#include "log_format.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <time.h>

#include <nlohmann/json.hpp>
#include <string>

namespace trainscope {
namespace {

// The text format's pattern: local time with offset, level, message.
constexpr const char* kTextPattern = "%Y-%m-%dT%H:%M:%S.%e%z %^%l%$ %v";

// A JSON string literal of `text`, quotes included.
std::string Quoted(std::string_view text) {
  return nlohmann::json(std::string(text))
      .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// "[tag] rest" -> {tag, rest}; a tag is short and has no spaces.
std::pair<std::string_view, std::string_view> SplitComponent(
    std::string_view text) {
  constexpr size_t kLongestTag = 40;
  if (!text.starts_with('[')) return {{}, text};
  const size_t close = text.find(']');  // npos is past kLongestTag too
  if (close > kLongestTag) return {{}, text};
  const std::string_view tag = text.substr(1, close - 1);
  if (tag.empty() || tag.find(' ') != std::string_view::npos) return {{}, text};
  std::string_view rest = text.substr(close + 1);
  if (rest.starts_with(' ')) rest.remove_prefix(1);
  return {tag, rest};
}

// "2026-11-28T07:55:01.123Z": UTC, whatever the node's time zone.
std::string UtcMillis(std::chrono::system_clock::time_point t) {
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                      t.time_since_epoch())
                      .count();
  const time_t seconds = static_cast<time_t>(ms / 1000);
  tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
                     utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday,
                     utc.tm_hour, utc.tm_min, utc.tm_sec, ms % 1000);
}

}  // namespace

void JsonLogFormatter::format(const spdlog::details::log_msg& msg,
                              spdlog::memory_buf_t& dest) {
  const auto [component, text] =
      SplitComponent(std::string_view(msg.payload.data(), msg.payload.size()));
  const auto level = spdlog::level::to_string_view(msg.level);
  fmt::format_to(std::back_inserter(dest),
                 "{{\"ts\":\"{}\",\"level\":{},\"component\":{},\"msg\":{}}}\n",
                 UtcMillis(msg.time),
                 Quoted(std::string_view(level.data(), level.size())),
                 Quoted(component), Quoted(text));
}

std::unique_ptr<spdlog::formatter> JsonLogFormatter::clone() const {
  return std::make_unique<JsonLogFormatter>();
}

void UseLogFormat(std::string_view format) {
  if (format == "json") {
    spdlog::set_formatter(std::make_unique<JsonLogFormatter>());
  } else {
    spdlog::set_pattern(kTextPattern);
  }
}

}  // namespace trainscope
