#pragma once

#include <spdlog/formatter.h>

#include <memory>
#include <string_view>

namespace trainscope {

// --log-format json: one JSON object per line, as log shippers (Loki's
// promtail, Fluent Bit, Vector) parse without a regex:
//   {"ts":"2026-11-28T07:55:01.123Z","level":"warn","component":"diagnosis",
//    "msg":"hot_parameter_server entered ..."}
// `component` is the tag every message starts with ("[diagnosis] ..."),
// taken out of `msg`; empty when a message has none. Strings are escaped
// as JSON; bytes that are not UTF-8 become U+FFFD.
class JsonLogFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg,
              spdlog::memory_buf_t& dest) override;
  std::unique_ptr<spdlog::formatter> clone() const override;
};

// "text" (the default pattern) or "json": the formatter for a --log-format
// value; text keeps spdlog's pattern formatter.
void UseLogFormat(std::string_view format);

}  // namespace trainscope
