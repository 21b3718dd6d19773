#pragma once

#include <vector>

#include "config.h"
#include "trainscope/collector.h"

namespace trainscope {

// The collectors in the order they run each cycle. Adding a collector is
// one line here (no static self-registration).
std::vector<CollectorPtr> MakeCollectors(const AgentConfig& config);

}  // namespace trainscope
