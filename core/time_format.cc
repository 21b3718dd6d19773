#include "trainscope/time_format.h"

#include <cctype>
#include <ctime>

namespace trainscope {
namespace {

// `count` decimal digits at text[*pos], advancing *pos; false otherwise.
bool Digits(std::string_view text, size_t* pos, size_t count, int* out) {
  if (text.size() < *pos + count) return false;
  int value = 0;
  for (size_t i = 0; i < count; ++i) {
    const char c = text[*pos + i];
    if (std::isdigit(static_cast<unsigned char>(c)) == 0) return false;
    value = value * 10 + (c - '0');
  }
  *pos += count;
  *out = value;
  return true;
}

bool Expect(std::string_view text, size_t* pos, std::string_view one_of) {
  if (*pos >= text.size() || one_of.find(text[*pos]) == std::string_view::npos)
    return false;
  ++*pos;
  return true;
}

// The offset east of UTC in seconds ("Z", "+02:00", "-05:30").
bool Offset(std::string_view text, size_t* pos, int* seconds) {
  if (Expect(text, pos, "Zz")) {
    *seconds = 0;
    return true;
  }
  if (*pos >= text.size()) return false;
  const int sign = text[*pos] == '-' ? -1 : 1;
  int hours = 0;
  int minutes = 0;
  if (!Expect(text, pos, "+-") || !Digits(text, pos, 2, &hours) ||
      !Expect(text, pos, ":") || !Digits(text, pos, 2, &minutes) ||
      hours > 23 || minutes > 59) {
    return false;
  }
  *seconds = sign * (hours * 3600 + minutes * 60);
  return true;
}

}  // namespace

std::string Rfc3339(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::optional<double> ParseRfc3339(std::string_view text) {
  size_t pos = 0;
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!Digits(text, &pos, 4, &year) || !Expect(text, &pos, "-") ||
      !Digits(text, &pos, 2, &month) || !Expect(text, &pos, "-") ||
      !Digits(text, &pos, 2, &day) || !Expect(text, &pos, "Tt ") ||
      !Digits(text, &pos, 2, &hour) || !Expect(text, &pos, ":") ||
      !Digits(text, &pos, 2, &minute) || !Expect(text, &pos, ":") ||
      !Digits(text, &pos, 2, &second)) {
    return std::nullopt;
  }
  double fraction = 0;
  if (pos < text.size() && text[pos] == '.') {
    double scale = 0.1;
    size_t digits = 0;
    for (++pos; pos < text.size() &&
                std::isdigit(static_cast<unsigned char>(text[pos])) != 0;
         ++pos, ++digits, scale /= 10) {
      fraction += (text[pos] - '0') * scale;
    }
    if (digits == 0) return std::nullopt;
  }
  int offset = 0;
  if (!Offset(text, &pos, &offset) || pos != text.size()) return std::nullopt;
  // 60 is a leap second; the API never writes one, RFC 3339 allows it.
  if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
  using namespace std::chrono;
  const year_month_day date{std::chrono::year{year},
                            std::chrono::month{static_cast<unsigned>(month)},
                            std::chrono::day{static_cast<unsigned>(day)}};
  if (!date.ok()) return std::nullopt;
  const auto days = sys_days{date}.time_since_epoch().count();
  return static_cast<double>(days) * 86400.0 + hour * 3600.0 + minute * 60.0 +
         second + fraction - offset;
}

}  // namespace trainscope
