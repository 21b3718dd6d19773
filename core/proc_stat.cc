#include "trainscope/proc_stat.h"

#include <charconv>
#include <system_error>
#include <vector>

namespace trainscope {
namespace {

std::optional<double> Number(std::string_view text) {
  double value = 0;
  auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    return std::nullopt;
  return value;
}

std::vector<std::string_view> Fields(std::string_view text) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) ++i;
    const size_t start = i;
    while (i < text.size() && text[i] != ' ' && text[i] != '\n') ++i;
    if (i > start) out.push_back(text.substr(start, i - start));
  }
  return out;
}

}  // namespace

ProcessStat ParseProcStat(std::string_view stat, double clock_ticks_per_second,
                          double page_size_bytes,
                          std::optional<double> boot_time_seconds) {
  ProcessStat out;
  const size_t close = stat.rfind(')');
  if (close == std::string_view::npos || clock_ticks_per_second <= 0)
    return out;
  // fields[0] is field 3 (state).
  const auto fields = Fields(stat.substr(close + 1));
  if (!fields.empty() && fields[0].size() == 1) out.state = fields[0][0];
  auto field = [&](size_t n) -> std::optional<double> {
    if (n < 3 || n - 3 >= fields.size()) return std::nullopt;
    return Number(fields[n - 3]);
  };
  const auto utime = field(14), stime = field(15);
  if (utime && stime)
    out.cpu_seconds = (*utime + *stime) / clock_ticks_per_second;
  if (auto rss = field(24)) out.resident_bytes = *rss * page_size_bytes;
  out.virtual_bytes = field(23);
  if (auto start = field(22); start && boot_time_seconds)
    out.start_time_seconds =
        *boot_time_seconds + *start / clock_ticks_per_second;
  return out;
}

std::optional<double> ParseBootTime(std::string_view proc_stat) {
  size_t at = 0;
  while (at < proc_stat.size()) {
    size_t end = proc_stat.find('\n', at);
    if (end == std::string_view::npos) end = proc_stat.size();
    const std::string_view line = proc_stat.substr(at, end - at);
    if (line.starts_with("btime ")) return Number(line.substr(6));
    at = end + 1;
  }
  return std::nullopt;
}

}  // namespace trainscope
