#include "report_page/rank_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "report_page/format.h"
#include "trainscope/html_text.h"

namespace trainscope::page {
namespace {

// /proc's state letters in words, for the reader who does not know them.
std::string StateWords(const std::string& state) {
  if (state == "R") return "R running";
  if (state == "S") return "S sleeping";
  if (state == "D") return "D disk wait";
  if (state == "T") return "T stopped";
  if (state == "Z") return "Z zombie";
  if (state == "-") return "- no process";
  return state;
}

std::string Cell(const std::string& text, const char* cls = nullptr) {
  const std::string shown = text.empty() ? "–" : text;
  if (!cls) return "<td>" + HtmlEscape(shown) + "</td>";
  return fmt::format("<td class=\"{}\">{}</td>", cls, HtmlEscape(shown));
}

std::string Cores(const std::optional<double>& v) {
  return v ? fmt::format("{:.2f}", *v) : "";
}

std::string Seconds(const std::optional<double>& v) {
  return v ? fmt::format("{:.1f} s", *v) : "";
}

std::string Rate(const std::optional<double>& v) {
  return v ? FormatRate(std::max(0.0, *v)) : "";
}

void Row(std::string& out, const RankView& r) {
  out += fmt::format("<tr{} data-pod=\"{}\">",
                     r.suspect ? " class=\"suspect\"" : "", HtmlEscape(r.pod));
  // Said in words, not only by the row's colour; blank for the others.
  out += r.suspect ? "<td class=\"mark\">suspect</td>"
                   : "<td class=\"mark\"></td>";
  out += Cell(r.pod) + Cell(r.node) + Cell(r.role);
  out += Cell(StateWords(r.state)) + Cell(r.processes);
  out += Cell(Cores(r.cpu_cores), "num");
  out += Cell(Seconds(r.quiet_seconds), "num");
  out += Cell(Rate(r.transmit_bytes_per_second), "num");
  out += Cell(Rate(r.receive_bytes_per_second), "num");
  out += Cell(r.unanswered_peer);
  out += "</tr>";
}

}  // namespace

std::string RankTable(const DiagnosisView& d) {
  if (d.ranks.empty()) return "";
  std::string out =
      "<table class=\"ranks\"><thead><tr><th></th><th>pod</th><th>node</th>"
      "<th>role</th><th>state</th><th>processes</th><th>CPU cores</th>"
      "<th>quiet for</th><th>sent</th><th>received</th><th>waits on</th>"
      "</tr></thead><tbody>";
  for (const auto& r : d.ranks) Row(out, r);
  out += "</tbody></table>";
  return out;
}

}  // namespace trainscope::page
