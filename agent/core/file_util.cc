#include "trainscope/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "trainscope/unique_fd.h"

namespace trainscope {

std::optional<std::string> ReadSmallFile(const std::filesystem::path& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  std::string out;
  char buf[8192];
  bool ok = true;
  for (;;) {
    ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      ok = false;
      break;
    }
  }
  if (!ok) return std::nullopt;
  return out;
}

}  // namespace trainscope
