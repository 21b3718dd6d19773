#pragma once

#include <spdlog/logger.h>
#include <spdlog/sinks/ringbuffer_sink.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "test_wait.h"

namespace trainscope::testing {

// Routes spdlog's default logger into a ring buffer for the lifetime of the
// object so tests can assert on the lines a component logs (from any
// thread), then restores the previous default logger.
class LogCapture {
 public:
  explicit LogCapture(size_t capacity = 4096)
      : sink_(std::make_shared<spdlog::sinks::ringbuffer_sink_mt>(capacity)),
        previous_(spdlog::default_logger()) {
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_level(spdlog::level::trace);
    logger->set_pattern("%l %v");
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;

  std::vector<std::string> lines() const { return sink_->last_formatted(); }

  size_t Count(std::string_view needle) const {
    size_t n = 0;
    for (const auto& line : lines()) {
      if (line.find(needle) != std::string::npos) ++n;
    }
    return n;
  }
  bool Contains(std::string_view needle) const { return Count(needle) > 0; }
  bool WaitFor(std::string_view needle,
               std::chrono::milliseconds timeout =
                   std::chrono::milliseconds(5000)) const {
    return WaitUntil([&] { return Contains(needle); }, timeout);
  }
  std::string Dump() const {
    std::string out;
    for (const auto& line : lines()) out += line;
    return out;
  }

 private:
  std::shared_ptr<spdlog::sinks::ringbuffer_sink_mt> sink_;
  std::shared_ptr<spdlog::logger> previous_;
};

}  // namespace trainscope::testing
