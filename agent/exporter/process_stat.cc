#include "exporter/process_stat.h"

#include <sys/resource.h>
#include <unistd.h>

#include <filesystem>
#include <system_error>
#include <vector>

#include "trainscope/file_util.h"

namespace trainscope {
namespace {

std::optional<double> CountEntries(const std::string& dir) {
  std::error_code ec;
  std::filesystem::directory_iterator it(dir, ec);
  if (ec) return std::nullopt;
  double n = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(ec)) {
    if (ec) return std::nullopt;
    ++n;
  }
  return n;
}

}  // namespace

ProcessStat ReadSelfProcessStat(const std::string& proc) {
  ProcessStat out;
  std::optional<double> boot;
  if (auto text = ReadSmallFile(proc + "/stat")) boot = ParseBootTime(*text);
  if (auto stat = ReadSmallFile(proc + "/self/stat")) {
    out = ParseProcStat(*stat, static_cast<double>(::sysconf(_SC_CLK_TCK)),
                        static_cast<double>(::sysconf(_SC_PAGESIZE)), boot);
  }
  out.open_fds = CountEntries(proc + "/self/fd");
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      limit.rlim_cur != RLIM_INFINITY)
    out.max_fds = static_cast<double>(limit.rlim_cur);
  return out;
}

}  // namespace trainscope
