#pragma once

#include <string>
#include <vector>

#include "report_page/layout.h"
#include "report_page/model.h"

namespace trainscope::page {

// Inline SVG for one job: the topology (pods, node frames, edges as thick as
// the bytes they carry) and the PS traffic shares as bars. Every string from
// the report is escaped; elements carry data-* attributes (data-pod,
// data-role, data-hot, data-kinds) so tests and users can find them.
std::string TopologySvg(
    const JobView& job, const JobLayout& layout,
    const std::vector<std::pair<std::string, PodMark>>& node_marks);
std::string ShareBarsSvg(const JobView& job);

// The fill of a PS box: cool at or below its fair share, warmer above it,
// red when diagnosed hot.
std::string PsFill(const PodView& ps, size_t ps_count);

}  // namespace trainscope::page
