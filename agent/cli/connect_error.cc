#include "cli/connect_error.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <memory>

namespace trainscope::cli {
namespace {

// errno values a failed connect() leaves that say why.
bool IsConnectErrno(int err) {
  switch (err) {
    case ECONNREFUSED:
    case EHOSTUNREACH:
    case ENETUNREACH:
    case ETIMEDOUT:
    case ECONNRESET:
    case EACCES:
    case EPERM:
    case EADDRNOTAVAIL:
      return true;
    default:
      return false;
  }
}

std::string Sentence(int err) {
  switch (err) {
    case ECONNREFUSED:
      return "connection refused (nothing listens on that port)";
    case EHOSTUNREACH:
      return "no route to host";
    case ENETUNREACH:
      return "network unreachable";
    case ETIMEDOUT:
      return "connect timed out (a firewall dropping packets, or the host is "
             "down)";
    default: {
      std::string text = std::strerror(err);
      if (!text.empty()) text[0] = static_cast<char>(std::tolower(text[0]));
      return text;
    }
  }
}

// One non-blocking connect to `ai`: the errno it failed with, 0 when it
// connected or when nothing came back within `wait_ms`.
int ProbeConnect(const addrinfo& ai, int wait_ms) {
  const int fd =
      ::socket(ai.ai_family, ai.ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
               ai.ai_protocol);
  if (fd < 0) return errno;
  int err = 0;
  if (::connect(fd, ai.ai_addr, ai.ai_addrlen) != 0) {
    err = errno;
    if (err == EINPROGRESS) {
      pollfd p{fd, POLLOUT, 0};
      err = 0;
      if (::poll(&p, 1, wait_ms) == 1) {
        socklen_t len = sizeof err;
        if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0) {
          err = errno;
        }
      }
    }
  }
  ::close(fd);
  return err;
}

}  // namespace

std::string ConnectFailureReason(const std::string& host, int port,
                                 int saved_errno, double max_wait_seconds) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (const int rc =
          ::getaddrinfo(host.c_str(), service.c_str(), &hints, &found);
      rc != 0) {
    return "cannot resolve host '" + host + "' (" + ::gai_strerror(rc) + ")";
  }
  const std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> list(
      found, &::freeaddrinfo);
  if (IsConnectErrno(saved_errno)) return Sentence(saved_errno);
  const int wait_ms =
      static_cast<int>(std::clamp(max_wait_seconds, 0.0, 3.0) * 1000);
  const int err = wait_ms > 0 ? ProbeConnect(*list, wait_ms) : 0;
  if (err != 0) return Sentence(err);
  return "cannot connect (the server refused, dropped or reset the "
         "connection)";
}

}  // namespace trainscope::cli
