#include "report/lost_time_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "report_page/model.h"

namespace trainscope {
namespace {

// Largest first, then by name; non-numbers and non-positive values left out.
std::vector<std::pair<std::string, double>> Causes(const nlohmann::json& m) {
  std::vector<std::pair<std::string, double>> out;
  if (!m.is_object()) return out;
  for (const auto& [cause, s] : m.items())
    if (s.is_number() && s.get<double>() > 0)
      out.emplace_back(cause, s.get<double>());
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  return out;
}

double Sum(const std::vector<std::pair<std::string, double>>& causes) {
  double sum = 0;
  for (const auto& [cause, s] : causes) sum += s;
  return sum;
}

std::string Text(const nlohmann::json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : "?";
}

}  // namespace

std::string DurationText(double seconds) {
  if (seconds >= 3600) return fmt::format("{:.1f} h", seconds / 3600);
  if (seconds >= 60) return fmt::format("{:.1f} min", seconds / 60);
  return fmt::format("{:.0f} s", seconds);
}

std::string LostTimeText(const nlohmann::json& report) {
  const auto section = report.find("lost_time");
  if (section == report.end() || !section->is_object()) return "";
  const auto by_cause = Causes(section->value("by_cause", nlohmann::json()));
  std::string out =
      "\nLost time:\n  This range: " + DurationText(Sum(by_cause)) + " lost";
  for (const auto& [cause, s] : by_cause)
    out += ", " + DurationText(s) + " " + cause;
  out += ".\n";
  const auto jobs = section->find("jobs");
  if (jobs == section->end() || !jobs->is_array()) return out;
  for (const auto& job : *jobs) {
    if (!job.is_object()) continue;
    const auto causes = Causes(job.value("lost_seconds", nlohmann::json()));
    if (causes.empty()) continue;
    const auto goodput = job.find("goodput_ratio");
    out += fmt::format(
        "  {}{}/{}: goodput {}, lost {} (", page::ClusterPrefix(job),
        Text(job, "namespace"), Text(job, "training_job"),
        goodput != job.end() && goodput->is_number()
            ? fmt::format("{:.0f}%", 100 * goodput->get<double>())
            : "?",
        DurationText(Sum(causes)));
    for (size_t i = 0; i < causes.size(); ++i)
      out += (i ? ", " : "") + causes[i].first + " " +
             DurationText(causes[i].second);
    out += ")\n";
  }
  return out;
}

}  // namespace trainscope
