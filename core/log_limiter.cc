#include "trainscope/log_limiter.h"

namespace trainscope {

LogLimiter::LogLimiter(Clock::duration interval) : interval_(interval) {}

std::optional<std::string> LogLimiter::Pass(const std::string& key,
                                            std::string message,
                                            Clock::time_point now) {
  std::lock_guard lock(mu_);
  if (seen_.size() >= kMaxKeys && !seen_.count(key)) seen_.clear();
  auto [it, first] = seen_.try_emplace(key, Seen{now, 0});
  if (first) return message;
  Seen& seen = it->second;
  if (now - seen.last_logged < interval_) {
    ++seen.suppressed;
    return std::nullopt;
  }
  if (seen.suppressed > 0) {
    message += " (" + std::to_string(seen.suppressed) +
               (seen.suppressed == 1 ? " repeat" : " repeats") +
               " not logged in the last " + ShortDuration(interval_) + ")";
  }
  seen = Seen{now, 0};
  return message;
}

bool LogLimiter::Clear(const std::string& key) {
  std::lock_guard lock(mu_);
  return seen_.erase(key) > 0;
}

void LogLimiter::ClearAll() {
  std::lock_guard lock(mu_);
  seen_.clear();
}

std::string ShortDuration(std::chrono::steady_clock::duration d) {
  using namespace std::chrono;
  const auto s = duration_cast<seconds>(d).count();
  if (s >= 3600 && s % 3600 == 0) return std::to_string(s / 3600) + "h";
  if (s >= 60 && s % 60 == 0) return std::to_string(s / 60) + "m";
  return std::to_string(s) + "s";
}

}  // namespace trainscope
