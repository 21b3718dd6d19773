#include "trainscope/file_util.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "trainscope/unique_fd.h"

namespace trainscope {
namespace {

std::optional<std::string> ReadAll(const UniqueFd& fd) {
  if (!fd.valid()) return std::nullopt;
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return out;
    } else if (errno != EINTR) {
      return std::nullopt;
    }
  }
}

}  // namespace

std::optional<std::string> ReadSmallFile(const std::filesystem::path& path) {
  return ReadAll(UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)));
}

std::optional<std::string> ReadSmallFileAt(int dir_fd, const char* name) {
  return ReadAll(UniqueFd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC)));
}

}  // namespace trainscope
