#include "report_page/format.h"

#include <fmt/format.h>

#include <cmath>
#include <iterator>

namespace trainscope::page {

std::string FormatRate(double bytes_per_second) {
  if (!std::isfinite(bytes_per_second) || bytes_per_second < 0) return "?";
  static constexpr const char* kUnits[] = {"B/s", "kB/s", "MB/s", "GB/s",
                                           "TB/s"};
  size_t unit = 0;
  double v = bytes_per_second;
  while (v >= 1000 && unit + 1 < std::size(kUnits)) {
    v /= 1000;
    ++unit;
  }
  if (unit == 0) return fmt::format("{:.0f} {}", v, kUnits[unit]);
  const int digits = v < 10 ? 2 : v < 100 ? 1 : 0;
  return fmt::format("{:.{}f} {}", v, digits, kUnits[unit]);
}

std::string FormatPercent(double ratio) {
  if (!std::isfinite(ratio)) return "?";
  if (ratio > 0 && ratio < 0.005) return "<1%";
  return fmt::format("{:.0f}%", ratio * 100);
}

}  // namespace trainscope::page
