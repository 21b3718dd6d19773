#pragma once

#include <string>
#include <vector>

#include "report_page/model.h"

namespace trainscope::page {

// The topology drawing of one job as pure geometry (SVG user units, origin
// top left): no text measuring, no I/O, so tests check it directly.
//
// Pods are grouped by node when the job spans several (or unknown) nodes;
// each group is a frame with its PS on top and its workers below, and the
// frames wrap into rows. Up to `detailed_ps` PS and `detailed_workers`
// workers every pod is a box of its own; beyond that the job is summarised:
// the diagnosed and busiest PS and the diagnosed workers stay boxes, the
// rest become one box per node ("+180 workers").

struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
};
bool Overlaps(const Rect& a, const Rect& b);
bool Contains(const Rect& outer, const Rect& inner);

struct PodBox {
  Rect rect;
  bool ps = false;
  // Indexes into JobView::ps or ::workers; more than one for a summary box.
  std::vector<size_t> members;
  bool summary = false;
  size_t group = 0;
};

struct GroupFrame {
  Rect rect;
  std::string node;       // "" = pods whose node is unknown
  bool labelled = false;  // drawn as a frame with the node's name
};

struct EdgeLine {
  double x1 = 0, y1 = 0, x2 = 0, y2 = 0;  // worker side -> PS side
  double bytes_per_second = 0;
  size_t ps_box = 0;  // index into JobLayout::boxes
};

struct JobLayout {
  double width = 0, height = 0;
  bool summarised = false;
  // Edges drawn per node group instead of per worker (too many to read).
  bool bundled_edges = false;
  bool compact_workers = false;  // small worker boxes, short labels
  double max_edge_bytes_per_second = 0;
  std::vector<GroupFrame> groups;
  std::vector<PodBox> boxes;
  std::vector<EdgeLine> edges;
};

struct LayoutLimits {
  size_t detailed_ps = 20;
  size_t detailed_workers = 200;
  size_t detailed_edges = 600;
  size_t summary_ps = 12;              // PS boxes kept when summarised
  size_t summary_marked_workers = 16;  // diagnosed workers kept
  double max_width = 1160;
};

JobLayout LayoutJob(const JobView& job, const LayoutLimits& limits = {});

// Box sizes (shared with the SVG writer, which fits text into them).
inline constexpr double kPsWidth = 112, kPsHeight = 42;
inline constexpr double kWorkerWidth = 112, kWorkerHeight = 34;
inline constexpr double kCompactWidth = 58, kCompactHeight = 24;

}  // namespace trainscope::page
