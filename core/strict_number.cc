#include "trainscope/strict_number.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <system_error>

namespace trainscope {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Length of `[digits][.digits][(e|E)[+-]digits]` at the start of `s` with at
// least one mantissa digit; 0 when `s` does not start with such a number.
size_t DecimalLength(std::string_view s) {
  size_t i = 0;
  size_t digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    const size_t exponent_start = j;
    while (j < s.size() && IsDigit(s[j])) ++j;
    if (j == exponent_start) return 0;
    i = j;
  }
  return i;
}

}  // namespace

std::optional<double> ParseDecimal(std::string_view text) {
  if (text.empty() || DecimalLength(text) != text.size()) return std::nullopt;
  double value = 0;
  const auto [end, err] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (err != std::errc() || end != text.data() + text.size() ||
      !std::isfinite(value)) {
    return std::nullopt;
  }
  return value;
}

std::optional<double> ParsePrometheusValue(std::string_view text) {
  if (text == "NaN") return std::numeric_limits<double>::quiet_NaN();
  if (text == "+Inf" || text == "Inf") {
    return std::numeric_limits<double>::infinity();
  }
  if (text == "-Inf") return -std::numeric_limits<double>::infinity();
  bool negative = false;
  if (!text.empty() && (text[0] == '+' || text[0] == '-')) {
    negative = text[0] == '-';
    text.remove_prefix(1);
  }
  const auto value = ParseDecimal(text);
  if (!value) return std::nullopt;
  return negative ? -*value : *value;
}

std::optional<uint64_t> ParseWholeNumber(std::string_view text) {
  if (text.empty() || (text.size() > 1 && text[0] == '0')) return std::nullopt;
  for (char c : text) {
    if (!IsDigit(c)) return std::nullopt;
  }
  uint64_t value = 0;
  const auto [end, err] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (err != std::errc() || end != text.data() + text.size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace trainscope
