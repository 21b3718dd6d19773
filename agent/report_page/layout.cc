#include "report_page/layout.h"

#include <algorithm>
#include <cmath>
#include <map>

namespace trainscope::page {
namespace {

constexpr double kGap = 8;         // between boxes
constexpr double kPad = 10;        // inside a frame
constexpr double kLabel = 18;      // a frame's node name
constexpr double kTierGap = 56;    // PS band to worker band: room for edges
constexpr double kGroupGap = 14;   // between frames
constexpr double kMinWidth = 320;  // an ungrouped drawing's least width
constexpr size_t kLargeWorkerUnits = 40;

struct Unit {
  bool ps = false;
  size_t group = 0;
  std::vector<size_t> members;
  bool summary = false;
};

struct GroupUnits {
  std::vector<size_t> ps, workers;  // indexes into units
};

// Node groups: one per node when the job spans several nodes or some pods'
// nodes are unknown next to known ones; otherwise one unlabelled group.
std::vector<GroupFrame> GroupsOf(const JobView& job,
                                 std::map<std::string, size_t>& index) {
  std::map<std::string, bool> nodes;
  for (const auto* list : {&job.ps, &job.workers}) {
    for (const auto& p : *list) nodes[p.node] = true;
  }
  const bool grouped = nodes.size() >= 2;
  std::vector<GroupFrame> groups;
  if (!grouped) {
    groups.push_back({{}, nodes.empty() ? "" : nodes.begin()->first, false});
    for (const auto& [node, _] : nodes) index[node] = 0;
    return groups;
  }
  // Known nodes by name, the unknown ones last.
  for (const auto& [node, _] : nodes) {
    if (node.empty()) continue;
    index[node] = groups.size();
    groups.push_back({{}, node, true});
  }
  if (nodes.count("")) {
    index[""] = groups.size();
    groups.push_back({{}, "", true});
  }
  return groups;
}

double BusyOf(const PodView& p) { return p.bytes_per_second.value_or(0); }

// The suspect rank of a stalled job: the one box a summary must never fold.
bool StallSuspect(const PodView& p) {
  return std::any_of(p.marks.begin(), p.marks.end(), [](const PodMark& m) {
    return m.kind == diagnosis::kTrainingStalled;
  });
}

// Which pods keep a box of their own when a role is summarised: a stalled
// job's suspect, then the other diagnosed ones, then the busiest, up to
// `keep`.
std::vector<bool> Kept(const std::vector<PodView>& pods, size_t keep,
                       bool busiest_too) {
  std::vector<size_t> order(pods.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const bool sa = StallSuspect(pods[a]), sb = StallSuspect(pods[b]);
    if (sa != sb) return sa;
    const bool ma = !pods[a].marks.empty(), mb = !pods[b].marks.empty();
    if (ma != mb) return ma;
    return BusyOf(pods[a]) > BusyOf(pods[b]);
  });
  std::vector<bool> kept(pods.size(), false);
  for (size_t k = 0; k < order.size() && k < keep; ++k) {
    if (!busiest_too && pods[order[k]].marks.empty()) break;
    kept[order[k]] = true;
  }
  return kept;
}

void AddUnits(const std::vector<PodView>& pods, bool ps, bool summarise,
              size_t keep, bool busiest_too,
              const std::map<std::string, size_t>& group_of,
              std::vector<Unit>& units, std::vector<size_t>& unit_of_pod) {
  unit_of_pod.assign(pods.size(), 0);
  const std::vector<bool> kept = summarise
                                     ? Kept(pods, keep, busiest_too)
                                     : std::vector<bool>(pods.size(), true);
  std::map<size_t, size_t> rest_unit;  // group -> summary unit
  for (size_t i = 0; i < pods.size(); ++i) {
    const size_t g = group_of.at(pods[i].node);
    if (kept[i]) {
      unit_of_pod[i] = units.size();
      units.push_back({ps, g, {i}, false});
      continue;
    }
    auto [it, added] = rest_unit.try_emplace(g, units.size());
    if (added) units.push_back({ps, g, {}, true});
    units[it->second].members.push_back(i);
    unit_of_pod[i] = it->second;
  }
  // A "summary" of one pod is just that pod.
  for (auto& u : units) {
    if (u.summary && u.members.size() == 1) u.summary = false;
  }
}

// Places `count` boxes of w x h in a grid of `cols` columns centred in
// [x, x + inner), starting at y.
void PlaceGrid(const std::vector<size_t>& unit_ids, size_t cols, double w,
               double h, double x, double inner, double y,
               std::vector<Rect>& rects) {
  if (unit_ids.empty()) return;
  const size_t used = std::min(cols, unit_ids.size());
  const double grid_w = static_cast<double>(used) * (w + kGap) - kGap;
  const double x0 = x + (inner - grid_w) / 2;
  for (size_t k = 0; k < unit_ids.size(); ++k) {
    const double cx = x0 + static_cast<double>(k % cols) * (w + kGap);
    const double cy = y + static_cast<double>(k / cols) * (h + kGap);
    rects[unit_ids[k]] = {cx, cy, w, h};
  }
}

size_t Rows(size_t count, size_t cols) { return (count + cols - 1) / cols; }

// Length of `n` boxes of size `s` in a row or column, gaps between.
double Span(size_t n, double s) {
  return n == 0 ? 0 : static_cast<double>(n) * (s + kGap) - kGap;
}

size_t ColumnsIn(double inner, double w) {
  return std::max<size_t>(1, static_cast<size_t>((inner + kGap) / (w + kGap)));
}

// The job's boxes before placement, by group.
struct JobUnits {
  std::vector<Unit> units;
  std::vector<size_t> unit_of_ps, unit_of_worker;
  std::vector<GroupUnits> members;  // per group
};

JobUnits MakeUnits(const JobView& job, const LayoutLimits& limits,
                   const std::map<std::string, size_t>& group_of,
                   JobLayout& out) {
  const bool many_ps = job.ps.size() > limits.detailed_ps;
  const bool many_workers = job.workers.size() > limits.detailed_workers;
  out.summarised = many_ps || many_workers;
  JobUnits u;
  AddUnits(job.ps, true, many_ps, limits.summary_ps, true, group_of, u.units,
           u.unit_of_ps);
  AddUnits(job.workers, false, many_workers, limits.summary_marked_workers,
           false, group_of, u.units, u.unit_of_worker);
  u.members.resize(out.groups.size());
  for (size_t i = 0; i < u.units.size(); ++i) {
    auto& g = u.members[u.units[i].group];
    (u.units[i].ps ? g.ps : g.workers).push_back(i);
  }
  return u;
}

// How wide each group's frame is, and how many frames share a row.
struct FrameRow {
  double group_w = 0;
  size_t per_row = 1;
};

// Ungrouped, the content's own width; grouped, an equal share of the row,
// with at least one PS and three workers side by side.
FrameRow FrameWidths(const JobLayout& out, const JobUnits& u, double max_width,
                     double worker_w) {
  FrameRow row;
  const size_t n_groups = out.groups.size();
  if (!out.groups.front().labelled) {
    const double inner = max_width - 2 * kPad;
    const auto& g = u.members.front();
    const size_t pc = std::min(g.ps.size(), ColumnsIn(inner, kPsWidth));
    const size_t wc = std::min(g.workers.size(), ColumnsIn(inner, worker_w));
    row.group_w = std::max({kMinWidth, Span(pc, kPsWidth) + 2 * kPad,
                            Span(wc, worker_w) + 2 * kPad});
    return row;
  }
  const double min_w =
      std::max(kPsWidth, 3 * (worker_w + kGap) - kGap) + 2 * kPad;
  row.per_row = std::clamp<size_t>(
      static_cast<size_t>((max_width + kGroupGap) / (min_w + kGroupGap)), 1,
      n_groups);
  const size_t rows = Rows(n_groups, row.per_row);
  row.per_row = Rows(n_groups, rows);  // balance the rows
  row.group_w = (max_width - static_cast<double>(row.per_row - 1) * kGroupGap) /
                static_cast<double>(row.per_row);
  return row;
}

// Frames row by row, each with its PS band above its worker band; the
// boxes' rectangles, by unit.
std::vector<Rect> PlaceGroups(const JobUnits& u, const FrameRow& row,
                              double worker_w, double worker_h,
                              JobLayout& out) {
  const size_t n_groups = out.groups.size();
  const bool labelled = out.groups.front().labelled;
  const double inner = row.group_w - 2 * kPad;
  const size_t ps_cols = ColumnsIn(inner, kPsWidth);
  const size_t w_cols = ColumnsIn(inner, worker_w);
  std::vector<Rect> rects(u.units.size());
  double y = 0;
  for (size_t first = 0; first < n_groups; first += row.per_row) {
    const size_t last = std::min(n_groups, first + row.per_row);
    size_t ps_rows = 0, w_rows = 0;
    for (size_t g = first; g < last; ++g) {
      ps_rows = std::max(ps_rows, Rows(u.members[g].ps.size(), ps_cols));
      w_rows = std::max(w_rows, Rows(u.members[g].workers.size(), w_cols));
    }
    const double ps_band = Span(ps_rows, kPsHeight);
    const double w_band = Span(w_rows, worker_h);
    const double tier = ps_band > 0 && w_band > 0 ? kTierGap : 0;
    const double top = kPad + (labelled ? kLabel : 0);
    const double frame_h = top + ps_band + tier + w_band + kPad;
    for (size_t g = first; g < last; ++g) {
      const double x =
          static_cast<double>(g - first) * (row.group_w + kGroupGap);
      out.groups[g].rect = {x, y, row.group_w, frame_h};
      PlaceGrid(u.members[g].ps, ps_cols, kPsWidth, kPsHeight, x + kPad, inner,
                y + top, rects);
      PlaceGrid(u.members[g].workers, w_cols, worker_w, worker_h, x + kPad,
                inner, y + top + ps_band + tier, rects);
      out.width = std::max(out.width, x + row.group_w);
    }
    y += frame_h + kGroupGap;
  }
  out.height = std::max(0.0, y - kGroupGap);
  return rects;
}

// Edges: bytes per (worker box, PS box); per (node group, PS box) when
// there are too many lines to read.
void AddEdges(const JobView& job, const LayoutLimits& limits, const JobUnits& u,
              const std::vector<Rect>& rects, JobLayout& out) {
  std::map<std::pair<size_t, size_t>, double> pairs;
  for (const auto& link : job.links) {
    if (link.worker >= u.unit_of_worker.size() ||
        link.ps >= u.unit_of_ps.size())
      continue;
    pairs[{u.unit_of_worker[link.worker], u.unit_of_ps[link.ps]}] +=
        link.bytes_per_second;
  }
  out.bundled_edges = pairs.size() > limits.detailed_edges;
  std::map<std::pair<size_t, size_t>, double> lines;  // (from, ps unit)
  for (const auto& [key, bytes] : pairs) {
    const size_t from =
        out.bundled_edges ? u.units[key.first].group : key.first;
    lines[{from, key.second}] += bytes;
  }
  for (const auto& [key, bytes] : lines) {
    if (bytes <= 0) continue;
    const Rect& to = rects[key.second];
    double x1, y1;
    if (out.bundled_edges) {
      // From the top of the group's worker band.
      const Rect& frame = out.groups[key.first].rect;
      x1 = frame.x + frame.w / 2;
      y1 = frame.y + frame.h - kPad;
      for (size_t w : u.members[key.first].workers) {
        y1 = std::min(y1, rects[w].y);
      }
    } else {
      const Rect& from = rects[key.first];
      x1 = from.x + from.w / 2;
      y1 = from.y;
    }
    out.edges.push_back(
        {x1, y1, to.x + to.w / 2, to.y + to.h, bytes, key.second});
    out.max_edge_bytes_per_second =
        std::max(out.max_edge_bytes_per_second, bytes);
  }
}

}  // namespace

JobLayout LayoutJob(const JobView& job, const LayoutLimits& limits) {
  JobLayout out;
  std::map<std::string, size_t> group_of;
  out.groups = GroupsOf(job, group_of);
  const JobUnits u = MakeUnits(job, limits, group_of, out);

  size_t worker_units = 0;
  for (const auto& unit : u.units) worker_units += unit.ps ? 0 : 1;
  out.compact_workers = worker_units > kLargeWorkerUnits;
  const double ww = out.compact_workers ? kCompactWidth : kWorkerWidth;
  const double wh = out.compact_workers ? kCompactHeight : kWorkerHeight;

  const FrameRow row = FrameWidths(out, u, limits.max_width, ww);
  const std::vector<Rect> rects = PlaceGroups(u, row, ww, wh, out);
  for (size_t i = 0; i < u.units.size(); ++i) {
    out.boxes.push_back({rects[i], u.units[i].ps, u.units[i].members,
                         u.units[i].summary, u.units[i].group});
  }
  AddEdges(job, limits, u, rects, out);
  return out;
}

bool Overlaps(const Rect& a, const Rect& b) {
  return a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h &&
         b.y < a.y + a.h;
}

bool Contains(const Rect& o, const Rect& i) {
  constexpr double e = 1e-6;
  return i.x >= o.x - e && i.y >= o.y - e && i.x + i.w <= o.x + o.w + e &&
         i.y + i.h <= o.y + o.h + e;
}

}  // namespace trainscope::page
