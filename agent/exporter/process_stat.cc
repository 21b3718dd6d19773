#include "exporter/process_stat.h"

#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/vfs.h>
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

// Since Linux 6.2 procfs gives the number of open descriptors as the size
// of /proc/<pid>/fd: one stat instead of listing thousands (the cgroup
// reader keeps its files open). A fixture or an older kernel lists.
std::optional<double> CountOpenFds(const std::string& fd_dir) {
  struct statfs fs_info {};
  struct stat st {};
  if (::statfs(fd_dir.c_str(), &fs_info) == 0 &&
      fs_info.f_type == PROC_SUPER_MAGIC && ::stat(fd_dir.c_str(), &st) == 0 &&
      st.st_size > 0) {
    return static_cast<double>(st.st_size);
  }
  return CountEntries(fd_dir);
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
  out.open_fds = CountOpenFds(proc + "/self/fd");
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 &&
      limit.rlim_cur != RLIM_INFINITY)
    out.max_fds = static_cast<double>(limit.rlim_cur);
  return out;
}

}  // namespace trainscope
