#include "report_page/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "report_page/format.h"
#include "trainscope/html_text.h"

namespace trainscope::page {
namespace {

constexpr const char* kHotFill = "#d62728";
constexpr const char* kStragglerFill = "#c8c8c8";
constexpr const char* kWorkerFill = "#e8f0e0";

std::string SeverityColour(const std::string& severity) {
  if (severity == "critical") return "#b00020";
  if (severity == "warning") return "#e07000";
  return "#1f77b4";
}

// The most severe mark decides the outline colour.
const PodMark* WorstMark(const std::vector<PodMark>& marks) {
  const PodMark* worst = nullptr;
  auto rank = [](const std::string& s) {
    return s == "critical" ? 0 : s == "warning" ? 1 : 2;
  };
  for (const auto& m : marks) {
    if (!worst || rank(m.severity) < rank(worst->severity)) worst = &m;
  }
  return worst;
}

std::string Hex(double r, double g, double b) {
  auto c = [](double v) {
    return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0)));
  };
  return fmt::format("#{:02x}{:02x}{:02x}", c(r), c(g), c(b));
}

// "#17" for "ctr-worker-17"; short names as they are.
std::string ShortLabel(const std::string& name) {
  size_t end = name.size(), start = end;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1])))
    --start;
  if (start < end && end - start <= 4) return "#" + name.substr(start);
  return Ellipsize(name, 6);
}

std::string Num(double v) { return fmt::format("{:.1f}", v); }

struct BoxText {
  std::string line1, line2, tooltip;
};

BoxText TextOf(const JobView& job, const PodBox& box) {
  const auto& list = box.ps ? job.ps : job.workers;
  BoxText t;
  if (box.summary) {
    double bytes = 0;
    for (size_t i : box.members) bytes += list[i].bytes_per_second.value_or(0);
    t.line1 =
        fmt::format("+{} {}", box.members.size(), box.ps ? "PS" : "workers");
    t.line2 = FormatRate(bytes);
    t.tooltip = t.line1 + " (summarised), " + t.line2;
    return t;
  }
  const PodView& p = list[box.members.front()];
  t.line1 = p.name;
  if (box.ps) {
    t.line2 = (p.share ? FormatPercent(*p.share) : std::string("?")) +
              (p.bytes_per_second ? " · " + FormatRate(*p.bytes_per_second)
                                  : std::string());
  } else if (p.bytes_per_second) {
    t.line2 = FormatRate(*p.bytes_per_second);
  }
  t.tooltip = fmt::format("{} ({}{})", p.name, box.ps ? "PS" : "worker",
                          p.node.empty() ? "" : ", node " + p.node);
  if (!t.line2.empty()) t.tooltip += "\n" + t.line2;
  for (const auto& m : p.marks) t.tooltip += "\n" + m.severity + ": " + m.kind;
  return t;
}

void Box(std::string& out, const JobView& job, const JobLayout& layout,
         const PodBox& box) {
  const auto& list = box.ps ? job.ps : job.workers;
  const PodView* pod = box.summary ? nullptr : &list[box.members.front()];
  const Rect& r = box.rect;
  std::string classes = box.ps ? "pod ps" : "pod worker";
  std::string fill = box.ps ? "#dbe8f5" : kWorkerFill;
  std::string stroke = "#5b6b7b", text_fill = "#1a1a1a", dash;
  double stroke_w = 1;
  std::string kinds;
  if (box.summary) classes += " summary", dash = "4 3";
  if (pod) {
    if (box.ps) fill = PsFill(*pod, job.ps.size());
    if (pod->hot) classes += " hot", text_fill = "#ffffff";
    if (pod->straggler) {
      classes += " straggler";
      fill = kStragglerFill;
      text_fill = "#555555";
      dash = "4 2";
    }
    if (const PodMark* worst = WorstMark(pod->marks)) {
      classes += " marked sev-" + SeverityClass(worst->severity);
      stroke = SeverityColour(worst->severity);
      stroke_w = 2.5;
    }
    for (const auto& m : pod->marks)
      kinds += (kinds.empty() ? "" : " ") + m.kind;
  }
  const BoxText text = TextOf(job, box);
  out += fmt::format("<g class=\"{}\" data-role=\"{}\"", HtmlEscape(classes),
                     box.ps ? "ps" : "worker");
  if (pod) {
    out += " data-pod=\"" + HtmlEscape(pod->name) + "\"";
    if (pod->hot) out += " data-hot=\"true\"";
    if (pod->straggler) out += " data-straggler=\"true\"";
    if (!kinds.empty()) out += " data-kinds=\"" + HtmlEscape(kinds) + "\"";
  } else {
    out += fmt::format(" data-members=\"{}\"", box.members.size());
  }
  out += "><title>" + HtmlEscape(text.tooltip) + "</title>";
  out += fmt::format(
      "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" rx=\"4\" "
      "fill=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>",
      Num(r.x), Num(r.y), Num(r.w), Num(r.h), fill, stroke, stroke_w,
      dash.empty() ? "" : " stroke-dasharray=\"" + dash + "\"");
  const bool compact = !box.ps && layout.compact_workers;
  // Badges: the kinds' tags, right-aligned inside the box.
  double badge_right = r.x + r.w - 3;
  if (pod) {
    for (auto it = pod->marks.rbegin(); it != pod->marks.rend(); ++it) {
      const std::string tag = KindTag(it->kind);
      const double w = 6.0 * static_cast<double>(tag.size()) + 4;
      if (badge_right - w < r.x + r.w / 2) break;
      badge_right -= w;
      out += fmt::format(
          "<rect class=\"badge\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"11\" "
          "rx=\"2\" fill=\"{}\"/><text class=\"badge-text\" x=\"{}\" "
          "y=\"{}\">{}</text>",
          Num(badge_right), Num(r.y + 2), Num(w), SeverityColour(it->severity),
          Num(badge_right + w / 2), Num(r.y + 10.5), HtmlEscape(tag));
      badge_right -= 2;
    }
  }
  if (compact) {
    const std::string label = box.summary
                                  ? fmt::format("+{}", box.members.size())
                                  : ShortLabel(text.line1);
    out += fmt::format(
        "<text class=\"label small\" x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>",
        Num(r.x + 4), Num(r.y + r.h - 7), text_fill, HtmlEscape(label));
  } else {
    const size_t chars = static_cast<size_t>((r.w - 8) / 6.4);
    const bool badges = badge_right < r.x + r.w - 3;
    out += fmt::format(
        "<text class=\"label\" x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>",
        Num(r.x + 4), Num(r.y + (badges ? 24 : 15)), text_fill,
        HtmlEscape(Ellipsize(text.line1, chars)));
    if (!text.line2.empty() && !badges) {
      out += fmt::format(
          "<text class=\"label sub\" x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>",
          Num(r.x + 4), Num(r.y + 29), text_fill,
          HtmlEscape(Ellipsize(text.line2, chars)));
    } else if (!text.line2.empty() && r.h >= 40) {
      out += fmt::format(
          "<text class=\"label sub\" x=\"{}\" y=\"{}\" fill=\"{}\">{}</text>",
          Num(r.x + 4), Num(r.y + 36), text_fill,
          HtmlEscape(Ellipsize(text.line2, chars)));
    }
  }
  out += "</g>";
}

}  // namespace

std::string PsFill(const PodView& ps, size_t ps_count) {
  if (ps.hot) return kHotFill;
  if (!ps.share || ps_count < 2) return "#dbe8f5";
  const double fair = 1.0 / static_cast<double>(ps_count);
  const double t = std::clamp((*ps.share - fair) / (1 - fair) * 2, 0.0, 1.0);
  // #dbe8f5 (cool) to #f5a35c (warm).
  return Hex(0xdb + t * (0xf5 - 0xdb), 0xe8 + t * (0xa3 - 0xe8),
             0xf5 + t * (0x5c - 0xf5));
}

std::string TopologySvg(
    const JobView& job, const JobLayout& layout,
    const std::vector<std::pair<std::string, PodMark>>& node_marks) {
  std::string out;
  out.reserve(256 + layout.boxes.size() * 420 + layout.edges.size() * 110);
  const double w = std::max(layout.width, 1.0),
               h = std::max(layout.height, 1.0);
  out += fmt::format(
      "<svg class=\"topology\" xmlns=\"http://www.w3.org/2000/svg\" "
      "viewBox=\"-2 -2 {} {}\" width=\"{}\" role=\"img\" "
      "aria-label=\"{}\">",
      Num(w + 4), Num(h + 4), Num(w + 4),
      HtmlEscape("Topology of job " + job.namespace_name + "/" +
                 job.training_job));
  for (const auto& g : layout.groups) {
    if (!g.labelled) continue;
    std::string tags;
    std::string stroke = "#9aa5b1";
    for (const auto& [node, mark] : node_marks) {
      if (g.node.empty() || node != g.node) continue;
      tags += " " + KindTag(mark.kind);
      stroke = SeverityColour(mark.severity);
    }
    const std::string label =
        (g.node.empty() ? std::string("node unknown / other nodes")
                        : "node " + g.node) +
        (tags.empty() ? "" : " —" + tags);
    out += fmt::format(
        "<g class=\"node-group{}\" data-node=\"{}\"><rect x=\"{}\" y=\"{}\" "
        "width=\"{}\" height=\"{}\" rx=\"6\" fill=\"#f7f9fb\" stroke=\"{}\"/>"
        "<text class=\"frame-label\" x=\"{}\" y=\"{}\">{}</text></g>",
        tags.empty() ? "" : " marked", HtmlEscape(g.node), Num(g.rect.x),
        Num(g.rect.y), Num(g.rect.w), Num(g.rect.h), stroke, Num(g.rect.x + 8),
        Num(g.rect.y + 16),
        HtmlEscape(Ellipsize(label, static_cast<size_t>(g.rect.w / 6.6))));
  }
  out += "<g class=\"edges\">";
  const double max = layout.max_edge_bytes_per_second;
  const double opacity = layout.edges.size() > 300 ? 0.3 : 0.55;
  for (const auto& e : layout.edges) {
    const PodBox& to = layout.boxes[e.ps_box];
    const bool hot = !to.summary && job.ps[to.members.front()].hot;
    out += fmt::format(
        "<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" "
        "stroke-width=\"{}\" stroke-opacity=\"{}\"/>",
        Num(e.x1), Num(e.y1), Num(e.x2), Num(e.y2), hot ? "#d62728" : "#4a6f96",
        fmt::format("{:.2f}",
                    0.6 + 7.4 * (max > 0 ? e.bytes_per_second / max : 0)),
        opacity);
  }
  out += "</g>";
  for (const auto& box : layout.boxes) Box(out, job, layout, box);
  out += "</svg>";
  return out;
}

std::string ShareBarsSvg(const JobView& job) {
  constexpr size_t kMaxRows = 24;
  constexpr double kLabelW = 190, kBarW = 380, kRowH = 20, kValueW = 130;
  std::vector<size_t> order;
  for (size_t i = 0; i < job.ps.size(); ++i) order.push_back(i);
  double rest_share = 0;
  size_t rest = 0;
  if (order.size() > kMaxRows) {
    // The largest shares, then "N more".
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
      return job.ps[a].share.value_or(0) > job.ps[b].share.value_or(0);
    });
    for (size_t k = kMaxRows - 1; k < order.size(); ++k) {
      rest_share += job.ps[order[k]].share.value_or(0);
    }
    rest = order.size() - (kMaxRows - 1);
    order.resize(kMaxRows - 1);
  }
  const size_t rows = order.size() + (rest ? 1 : 0);
  const double width = kLabelW + kBarW + kValueW;
  const double height = static_cast<double>(rows) * kRowH + 16;
  std::string out = fmt::format(
      "<svg class=\"shares\" xmlns=\"http://www.w3.org/2000/svg\" "
      "viewBox=\"0 0 {0} {1}\" width=\"{0}\" role=\"img\" "
      "aria-label=\"{2}\">",
      Num(width), Num(height),
      HtmlEscape("PS traffic shares of job " + job.training_job));
  auto row = [&](double y, const std::string& label, double share,
                 const std::string& value, const std::string& fill,
                 const std::string& pod) {
    out += "<g class=\"share-row\"";
    if (!pod.empty()) out += " data-pod=\"" + HtmlEscape(pod) + "\"";
    out += fmt::format(
        "><text class=\"bar-label\" x=\"{}\" y=\"{}\">{}</text>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#eef1f4\"/>"
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{}\" "
        "stroke=\"#5b6b7b\" stroke-width=\"0.5\"/>"
        "<text class=\"bar-value\" x=\"{}\" y=\"{}\">{}</text></g>",
        Num(kLabelW - 6), Num(y + 14), HtmlEscape(Ellipsize(label, 28)),
        Num(kLabelW), Num(y + 3), Num(kBarW), Num(kRowH - 6), Num(kLabelW),
        Num(y + 3), Num(kBarW * std::clamp(share, 0.0, 1.0)), Num(kRowH - 6),
        fill, Num(kLabelW + kBarW + 6), Num(y + 14), HtmlEscape(value));
  };
  double y = 0;
  for (size_t i : order) {
    const PodView& p = job.ps[i];
    std::string value = p.share ? FormatPercent(*p.share) : "no data";
    if (p.bytes_per_second) value += " · " + FormatRate(*p.bytes_per_second);
    row(y, p.name, p.share.value_or(0), value, PsFill(p, job.ps.size()),
        p.name);
    y += kRowH;
  }
  if (rest) {
    row(y, fmt::format("{} more PS", rest), rest_share,
        FormatPercent(rest_share) + " together", "#dbe8f5", "");
    y += kRowH;
  }
  if (job.ps.size() >= 2) {
    const double fair = kLabelW + kBarW / static_cast<double>(job.ps.size());
    out += fmt::format(
        "<line class=\"fair\" x1=\"{0}\" y1=\"0\" x2=\"{0}\" y2=\"{1}\" "
        "stroke=\"#333\" stroke-dasharray=\"3 3\"/><text class=\"bar-value\" "
        "x=\"{0}\" y=\"{2}\" text-anchor=\"middle\">fair share {3}</text>",
        Num(fair), Num(y), Num(y + 12),
        FormatPercent(1.0 / static_cast<double>(job.ps.size())));
  }
  out += "</svg>";
  return out;
}

}  // namespace trainscope::page
