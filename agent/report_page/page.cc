#include "report_page/page.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report_page/format.h"
#include "report_page/layout.h"
#include "report_page/model.h"
#include "report_page/rank_table.h"
#include "report_page/svg.h"
#include "trainscope/html_text.h"

namespace trainscope::page {
namespace {

constexpr std::string_view kStyle = R"css(
:root{--fg:#1a1a1a;--muted:#5f6b76;--line:#d5dbe1;--crit:#b00020;--warn:#e07000;--info:#1f77b4}
*{box-sizing:border-box}
body{margin:0;font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:var(--fg);background:#fff}
header{padding:12px 20px;border-bottom:1px solid var(--line);display:flex;flex-wrap:wrap;gap:6px 24px;align-items:baseline}
header h1{font-size:20px;margin:0}
header .meta{color:var(--muted)}
header nav a{margin-right:12px}
main{padding:8px 20px 24px}
.overview{display:flex;flex-wrap:wrap;gap:8px 18px;margin:8px 0 4px}
.pill{border:1px solid var(--line);border-radius:12px;padding:1px 10px}
.pill.sev-critical{border-color:var(--crit);color:var(--crit)}
.pill.sev-warning{border-color:var(--warn);color:var(--warn)}
.headline{font-size:16px;margin:8px 0 12px;padding:8px 12px;border-left:4px solid var(--warn);background:#fff7ec}
.headline.sev-critical{border-color:var(--crit);background:#fdecee}
.headline.ok{border-color:#2e7d32;background:#edf7ee}
section.job{border-top:1px solid var(--line);padding-top:8px;margin-top:12px}
section.job h2{font-size:17px;margin:4px 0}
.job .facts{color:var(--muted);margin:0 0 8px}
.job-body{display:grid;grid-template-columns:minmax(0,3fr) minmax(280px,2fr);gap:16px;align-items:start}
.job-body.wide{grid-template-columns:minmax(0,1fr)}
@media (max-width:1100px){.job-body{grid-template-columns:minmax(0,1fr)}}
figure{margin:0}
figcaption{color:var(--muted);font-size:12px;margin-top:4px}
svg{max-width:100%;height:auto;display:block}
svg text{font-family:system-ui,"DejaVu Sans",sans-serif}
svg .label{font-size:11px}
svg .label.sub{font-size:10px}
svg .label.small{font-size:10px;font-weight:600}
svg .frame-label{font-size:11px;fill:#3d4a57;font-weight:600}
svg .badge-text{font-size:8px;fill:#fff;text-anchor:middle;font-weight:700}
svg .bar-label{font-size:11px;text-anchor:end}
svg .bar-value{font-size:11px;fill:#333}
svg .pod.hot .label{font-weight:700}
h3{font-size:14px;margin:0 0 4px}
.diag{border:1px solid var(--line);border-left:5px solid var(--info);border-radius:4px;padding:8px 10px;margin:0 0 10px;overflow-wrap:anywhere}
.diag.sev-critical{border-left-color:var(--crit)}
.diag.sev-warning{border-left-color:var(--warn)}
.diag .sev{font-weight:700;text-transform:uppercase;font-size:11px;margin-right:6px}
.diag.sev-critical .sev{color:var(--crit)}
.diag.sev-warning .sev{color:var(--warn)}
.diag .kind{font-family:ui-monospace,"DejaVu Sans Mono",monospace;font-size:12px}
.diag .since{color:var(--muted);font-size:12px}
.diag p{margin:4px 0}
table.evidence{border-collapse:collapse;font-size:12px;margin:4px 0;width:100%}
table.evidence th{text-align:left;font-weight:500;color:var(--muted);padding:1px 8px 1px 0;vertical-align:top;white-space:nowrap}
table.evidence td{font-family:ui-monospace,"DejaVu Sans Mono",monospace;padding:1px 0;overflow-wrap:anywhere;white-space:pre-line}
.diag ul{margin:4px 0 0 18px;padding:0}
section.stalled{margin:8px 0 14px;padding:8px 12px;border:2px solid var(--crit);border-radius:4px;background:#fdecee}
section.stalled h2{font-size:17px;margin:0 0 6px;color:var(--crit)}
section.stalled .diag{background:#fff}
table.ranks{border-collapse:collapse;font-size:12px;margin:6px 0;width:100%}
table.ranks th{text-align:left;font-weight:600;color:var(--muted);border-bottom:1px solid var(--line);padding:2px 10px 2px 4px;white-space:nowrap}
table.ranks td{font-family:ui-monospace,"DejaVu Sans Mono",monospace;padding:2px 10px 2px 4px;overflow-wrap:anywhere;border-bottom:1px solid #eef1f4}
table.ranks td.num{text-align:right;white-space:nowrap}
table.ranks td.mark{font-family:inherit;font-weight:700;color:var(--crit)}
table.ranks tr.suspect td{background:#ffd9de;font-weight:700}
table.ranks tr.suspect td.mark{box-shadow:inset 4px 0 0 var(--crit)}
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;font-size:12px;color:var(--muted);margin:6px 0}
.legend span::before{content:"";display:inline-block;width:12px;height:12px;margin-right:4px;vertical-align:-2px;border:1px solid #5b6b7b;border-radius:2px;background:var(--c)}
.none{color:var(--muted)}
footer{padding:8px 20px;color:var(--muted);font-size:12px;border-top:1px solid var(--line)}
@media print{
 *{-webkit-print-color-adjust:exact;print-color-adjust:exact}
 body{font-size:10pt}
 header nav,footer .refresh{display:none}
 .job-body{grid-template-columns:minmax(0,1fr)}
 section.job{break-inside:avoid-page}
 .diag{break-inside:avoid}
 a{color:inherit;text-decoration:none}
}
)css";

std::string Scalar(const std::string& key, const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number() && key.find("bytes_per_second") != std::string::npos) {
    return FormatRate(v.get<double>());
  }
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  if (v.is_array() && std::all_of(v.begin(), v.end(), [](const auto& e) {
        return e.is_string();
      })) {
    std::string s;
    for (const auto& e : v) s += (s.empty() ? "" : ", ") + e.get<std::string>();
    return s.empty() ? "(none)" : s;
  }
  std::string s =
      v.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (s.size() > 600) s = s.substr(0, 600) + "…";
  return s;
}

// Evidence values as text: rates with units; a map of maps (the per-PS
// evidence) as one line per entry.
std::string EvidenceValue(const std::string& key, const nlohmann::json& v) {
  if (!v.is_object()) return Scalar(key, v);
  std::string out;
  size_t lines = 0;
  for (const auto& [name, entry] : v.items()) {
    if (++lines > 40) {
      out += "…\n";
      break;
    }
    out += name + ": ";
    if (entry.is_object()) {
      std::string fields;
      for (const auto& [k, x] : entry.items()) {
        fields += (fields.empty() ? "" : ", ") + k + " " + Scalar(k, x);
      }
      out += fields;
    } else {
      out += Scalar(name, entry);
    }
    out += "\n";
  }
  return out;
}

// A stall's per-rank table is drawn once, in the banner at the top; the
// stalled job's own section refers to it.
enum class Detail { kFull, kReferToBanner };

void Diagnosis(std::string& out, const DiagnosisView& d,
               Detail detail = Detail::kFull) {
  // A job-wide stall (no rank to blame) is about its job.
  const bool job_wide = d.pod.empty() && !d.training_job.empty() &&
                        (d.node.empty() || d.Stalled());
  const std::string where =
      job_wide        ? "job " + d.namespace_name + "/" + d.training_job
      : d.pod.empty() ? (d.node.empty() ? d.namespace_name : "node " + d.node)
                      : d.namespace_name + "/" + d.pod;
  out += fmt::format(
      "<article class=\"diag sev-{0}\" data-kind=\"{1}\" data-pod=\"{2}\">"
      "<h3><span class=\"sev\">{0}</span><span class=\"kind\">{1}</span> "
      "&mdash; {3}</h3>",
      SeverityClass(d.severity), HtmlEscape(d.kind), HtmlEscape(d.pod),
      HtmlEscape(where));
  if (!d.since.empty()) {
    out += "<div class=\"since\">since " + HtmlEscape(d.since) + "</div>";
  }
  out += "<p class=\"summary\">" + HtmlEscape(d.summary) + "</p>";
  if (detail == Detail::kReferToBanner) {
    out +=
        "<p class=\"none\">Every rank's state: <a href=\"#stalled\">at the "
        "top of the page</a>.</p></article>";
    return;
  }
  out += RankTable(d);
  if (!d.evidence.empty()) {
    out += "<table class=\"evidence\"><tbody>";
    for (const auto& [key, value] : d.evidence.items()) {
      if (key == "ranks" && !d.ranks.empty()) continue;  // the table above
      out += "<tr><th>" + HtmlEscape(key) + "</th><td>" +
             HtmlEscape(EvidenceValue(key, value)) + "</td></tr>";
    }
    out += "</tbody></table>";
  }
  if (!d.recommendations.empty()) {
    out += "<ul class=\"recommendations\">";
    for (const auto& r : d.recommendations) {
      out += "<li>" + HtmlEscape(r) + "</li>";
    }
    out += "</ul>";
  }
  out += "</article>";
}

std::string JobFacts(const JobView& job, const JobLayout& layout) {
  std::string facts =
      fmt::format("{} PS, {} workers", job.ps.size(), job.workers.size());
  if (job.ps_bytes_per_second > 0) {
    facts += " · PS traffic " + FormatRate(job.ps_bytes_per_second);
    if (!job.measured_from.empty()) {
      facts += " (measured from the " + job.measured_from + ")";
    }
  }
  if (job.measured_from == "some_ps") {  // diagnosis::kFromSomePs
    facts +=
        " · PS balance not judged here: this node holds only some of the "
        "job's PS and none of its workers (the cluster view judges it)";
  }
  if (job.headroom) {
    facts += fmt::format(
        " · scales to about {:.0f} workers (now {:.0f}): {} is {:.0f}% full",
        job.headroom->max_workers, job.headroom->workers,
        job.headroom->bottleneck, job.headroom->utilization * 100);
  }
  if (layout.summarised) facts += " · summarised view";
  return facts;
}

void Legend(std::string& out) {
  out +=
      "<div class=\"legend\"><span style=\"--c:#dbe8f5\">PS at or below its "
      "fair share</span><span style=\"--c:#f5a35c\">PS above its fair "
      "share</span><span style=\"--c:#d62728\">hot PS (diagnosed)</span>"
      "<span style=\"--c:#e8f0e0\">worker</span><span "
      "style=\"--c:#c8c8c8\">straggler</span><span style=\"--c:#fff\">edge "
      "width: bytes/s between worker and PS</span></div>";
}

constexpr double kWideDrawing = 760;

void Job(std::string& out, const ReportModel& m, const JobView& job) {
  const JobLayout layout = LayoutJob(job);
  out += fmt::format(
      "<section class=\"job\" data-namespace=\"{}\" data-job=\"{}\"><h2>{} "
      "<span class=\"none\">/ {}</span></h2><p class=\"facts\">{}</p>"
      "<div class=\"job-body{}\"><div class=\"drawing\">",
      HtmlEscape(job.namespace_name), HtmlEscape(job.training_job),
      HtmlEscape(job.training_job), HtmlEscape(job.namespace_name),
      HtmlEscape(JobFacts(job, layout)),
      // A wide drawing gets the full width, the diagnoses below it.
      layout.width > kWideDrawing ? " wide" : "");
  out += "<figure>" + TopologySvg(job, layout, m.node_marks);
  out += "<figcaption>PS on top, workers below";
  if (layout.groups.size() > 1) out += ", grouped by node";
  if (layout.bundled_edges) out += "; edges bundled per node";
  if (job.links.empty()) out += "; no per-peer traffic in this report";
  out += ".</figcaption></figure>";
  if (!job.ps.empty()) {
    out += "<figure>" + ShareBarsSvg(job) +
           "<figcaption>Share of the job's parameter-server traffic per "
           "PS.</figcaption></figure>";
  }
  out += "</div><div class=\"evidence-column\">";
  if (job.diagnoses.empty()) {
    out += "<p class=\"none\">No active diagnosis for this job.</p>";
  }
  for (size_t i : job.diagnoses) {
    const DiagnosisView& d = m.diagnoses[i];
    Diagnosis(out, d, d.Stalled() ? Detail::kReferToBanner : Detail::kFull);
  }
  out += "</div></div></section>";
}

void Header(std::string& out, const ReportModel& m,
            const PageOptions& options) {
  const bool cluster = m.node == "cluster";
  const std::string title =
      cluster ? "Trainscope — cluster" : "Trainscope — node " + m.node;
  out += "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += fmt::format(
      "<meta http-equiv=\"Content-Security-Policy\" content=\"{}\">",
      kContentSecurityPolicy);
  out +=
      "<meta name=\"viewport\" content=\"width=device-width, "
      "initial-scale=1\"><meta name=\"referrer\" content=\"no-referrer\">";
  if (options.refresh_seconds > 0) {
    out += fmt::format("<meta http-equiv=\"refresh\" content=\"{}\">",
                       options.refresh_seconds);
  }
  out += "<title>" + HtmlEscape(title) + "</title><style>";
  out += kStyle;
  out += "</style></head><body><header><h1>" + HtmlEscape(title) + "</h1>";
  out += "<span class=\"meta\">report generated " + HtmlEscape(m.generated_at);
  if (!m.source.empty()) out += " from " + HtmlEscape(m.source);
  out += "</span>";
  if (options.agent_links) {
    out +=
        "<nav><a href=\"/api/v1/report\">/api/v1/report</a><a "
        "href=\"/api/v1/report?format=text\">text</a><a "
        "href=\"/api/v1/pods\">/api/v1/pods</a><a "
        "href=\"/metrics\">/metrics</a></nav>";
  }
  out += "</header>";
}

void Overview(std::string& out, const ReportModel& m) {
  std::map<std::string, size_t> by_severity;
  for (const auto& d : m.diagnoses) ++by_severity[d.severity];
  size_t pods = 0;
  for (const auto& j : m.jobs) pods += j.ps.size() + j.workers.size();
  out += fmt::format(
      "<div class=\"overview\"><span class=\"pill\">{} training job{}</span>"
      "<span class=\"pill\">{} pods</span>",
      m.jobs.size(), m.jobs.size() == 1 ? "" : "s", pods);
  for (const char* s : {"critical", "warning", "info"}) {
    if (by_severity[s]) {
      const bool plural =
          by_severity[s] > 1 && std::string_view(s) == "warning";
      out += fmt::format("<span class=\"pill sev-{0}\">{1} {0}{2}</span>", s,
                         by_severity[s], plural ? "s" : "");
    }
  }
  out += "</div>";
  if (m.diagnoses.empty() || m.diagnoses.front().severity == "info") {
    out +=
        "<p class=\"headline ok\">No bottleneck diagnosed: nothing holds a "
        "job back right now.</p>";
  } else {
    const DiagnosisView& top = m.diagnoses.front();
    out += "<p class=\"headline sev-" + SeverityClass(top.severity) + "\">" +
           HtmlEscape(top.summary) + "</p>";
  }
}

// Stalled jobs above everything else: a stopped job loses all its time.
void StalledBanner(std::string& out, const ReportModel& m) {
  std::string stalls;
  for (const auto& d : m.diagnoses) {
    if (d.Stalled()) Diagnosis(stalls, d);
  }
  if (stalls.empty()) return;
  out += "<section class=\"stalled\" id=\"stalled\"><h2>Training stalled</h2>" +
         stalls + "</section>";
}

}  // namespace

std::string RenderReportPage(const nlohmann::json& report,
                             const PageOptions& options) {
  const ReportModel m = ModelOf(report);
  std::string out;
  out.reserve(64 * 1024);
  Header(out, m, options);
  out += "<main>";
  Overview(out, m);
  StalledBanner(out, m);
  Legend(out);
  if (m.jobs.empty()) {
    out += "<p class=\"none\">No training pods recognised.</p>";
  }
  for (const auto& job : m.jobs) Job(out, m, job);
  // Diagnoses no job shows: node-level ones and pods outside the jobs.
  std::vector<bool> shown(m.diagnoses.size(), false);
  for (const auto& job : m.jobs) {
    for (size_t i : job.diagnoses) shown[i] = true;
  }
  std::string rest;
  for (size_t i = 0; i < m.diagnoses.size(); ++i) {
    // Stalls are all in the banner already.
    if (!shown[i] && !m.diagnoses[i].Stalled()) Diagnosis(rest, m.diagnoses[i]);
  }
  if (!rest.empty()) {
    out += "<section class=\"other\"><h2>Other diagnoses</h2>" + rest +
           "</section>";
  }
  out += "</main><footer>Trainscope bottleneck report";
  if (options.refresh_seconds > 0) {
    out += fmt::format("<span class=\"refresh\"> · refreshes every {} s</span>",
                       options.refresh_seconds);
  }
  out += "</footer></body></html>\n";
  return out;
}

}  // namespace trainscope::page
