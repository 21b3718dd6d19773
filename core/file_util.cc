#include "trainscope/file_util.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <limits>

#include "trainscope/unique_fd.h"

namespace trainscope {
namespace {

// Reads to EOF, or stops once more than `max_bytes` are in (a /proc file
// reports size 0, and some, pagemap, would be read for gigabytes).
std::optional<std::string> ReadAll(
    const UniqueFd& fd, size_t max_bytes = std::numeric_limits<size_t>::max()) {
  if (!fd.valid()) return std::nullopt;
  std::string out;
  char buf[8192];
  while (out.size() <= max_bytes) {
    const ssize_t n = ::read(fd.get(), buf, sizeof buf);
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      break;
    } else if (errno != EINTR) {
      return std::nullopt;
    }
  }
  return out;
}

// What a path that is not a regular file is, for the error.
const char* KindOf(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  return "not a regular file";
}

}  // namespace

Status ReadConfigFile(const std::filesystem::path& path, size_t max_bytes,
                      std::string* out) {
  const std::string name = path.string();
  // O_NONBLOCK: opening a FIFO for reading otherwise waits for a writer.
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) {
    return Status::Error(name + ": cannot read: " + std::strerror(errno));
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Status::Error(name + ": cannot stat: " + std::strerror(errno));
  }
  if (!S_ISREG(st.st_mode)) {
    std::string why = name + " is " + KindOf(st.st_mode) + ", not a file";
    if (S_ISDIR(st.st_mode)) why += " (name the file inside it)";
    return Status::Error(why);
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return Status::Error(name + ": " + std::to_string(st.st_size) +
                         " bytes, more than the " + std::to_string(max_bytes) +
                         " a configuration file may have");
  }
  auto text = ReadAll(fd, max_bytes);
  if (!text) {
    return Status::Error(name + ": cannot read: " + std::strerror(errno));
  }
  if (text->size() > max_bytes) {
    return Status::Error(name + ": more than " + std::to_string(max_bytes) +
                         " bytes");
  }
  *out = std::move(*text);
  return Status::Ok();
}

std::optional<std::string> ReadSmallFile(const std::filesystem::path& path) {
  return ReadAll(UniqueFd(::open(path.c_str(), O_RDONLY | O_CLOEXEC)));
}

std::optional<std::string> ReadSmallFileAt(int dir_fd, const char* name) {
  return ReadAll(UniqueFd(::openat(dir_fd, name, O_RDONLY | O_CLOEXEC)));
}

std::optional<std::string> RereadSmallFile(int fd) {
  std::string out;
  char buf[8192];
  for (;;) {
    const ssize_t n =
        ::pread(fd, buf, sizeof buf, static_cast<off_t>(out.size()));
    if (n > 0) {
      out.append(buf, static_cast<size_t>(n));
    } else if (n == 0) {
      return out;
    } else if (errno != EINTR) {
      return std::nullopt;
    }
  }
}

}  // namespace trainscope
