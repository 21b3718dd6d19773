#include "cgroup/open_file_budget.h"

#include <sys/resource.h>

#include <algorithm>

#include "spdlog/spdlog.h"

namespace trainscope {

OpenFileBudget OpenFileBudget::FromFileLimit(size_t wanted, size_t reserve) {
  rlimit rl{};
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return OpenFileBudget(0);
  const rlim_t needed = static_cast<rlim_t>(wanted + reserve);
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < needed) {
    rlimit raised = rl;
    raised.rlim_cur =
        rl.rlim_max == RLIM_INFINITY ? needed : std::min(needed, rl.rlim_max);
    if (raised.rlim_cur > rl.rlim_cur &&
        ::setrlimit(RLIMIT_NOFILE, &raised) == 0)
      rl = raised;
  }
  if (rl.rlim_cur == RLIM_INFINITY) return OpenFileBudget(wanted);
  const size_t soft = static_cast<size_t>(rl.rlim_cur);
  const size_t files = soft > reserve ? std::min(wanted, soft - reserve) : 0;
  if (files < wanted) {
    spdlog::info(
        "[cgroup] open-file limit {}: {} cgroup files kept open between "
        "cycles, the rest reopened each cycle; raise `ulimit -n` to {} to "
        "keep {}",
        soft, files, needed, wanted);
  }
  return OpenFileBudget(files);
}

}  // namespace trainscope
