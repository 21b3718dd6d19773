#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "trainscope/snapshot.h"

namespace trainscope {

struct NetDevLine {
  std::string device;
  NetDevCounters counters;
};

// Parses /proc/<pid>/net/dev. Malformed lines are skipped; the two header
// lines are recognised by their '|' separators.
std::vector<NetDevLine> ParseNetDev(std::string_view text);

// Sum of all interfaces except loopback: what a pod sends and receives.
NetDevCounters SumExceptLoopback(const std::vector<NetDevLine>& lines);

}  // namespace trainscope
