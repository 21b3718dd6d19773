#include "diagnosis/bandwidth.h"

#include <cctype>
#include <cmath>
#include <string>
#include <utility>

namespace trainscope::diagnosis {

std::optional<double> ParseBandwidthAnnotation(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  size_t end = 0;
  while (end < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[end])) ||
          text[end] == '.')) {
    ++end;
  }
  if (end == 0) return std::nullopt;
  double number = 0;
  try {
    size_t used = 0;
    number = std::stod(std::string(text.substr(0, end)), &used);
    if (used != end) return std::nullopt;
  } catch (...) {
    return std::nullopt;
  }
  static const std::pair<std::string_view, double> kSuffixes[] = {
      {"", 1},
      {"m", 1e-3},
      {"k", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"Ki", 1024.0},
      {"Mi", 1048576.0},
      {"Gi", 1073741824.0},
      {"Ti", 1099511627776.0}};
  std::string_view suffix = text.substr(end);
  for (const auto& [name, factor] : kSuffixes) {
    if (suffix == name) {
      double bits = number * factor;
      if (!std::isfinite(bits) || bits <= 0) return std::nullopt;
      return bits / 8;
    }
  }
  return std::nullopt;
}

}  // namespace trainscope::diagnosis
