#pragma once

#include <string>

#include "trainscope/proc_stat.h"

namespace trainscope {

// This process, read from `proc` (default /proc): self/stat, self/fd, and
// the open-files limit.
ProcessStat ReadSelfProcessStat(const std::string& proc = "/proc");

}  // namespace trainscope
