#include "wire.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

namespace trainsim {
namespace {

using Clock = std::chrono::steady_clock;

int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             Clock::now().time_since_epoch())
      .count();
}

// Blocking sockets with short timeouts: each wait wakes up to look at the
// stop flag.
void SetTimeouts(int fd) {
  timeval tv{0, 200000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

constexpr size_t kChunk = 256 * 1024;
const char kZeros[kChunk] = {};

}  // namespace

void StopState::Request(std::chrono::milliseconds drain) {
  deadline_ms = NowMs() + drain.count();
  stop = true;
}

bool StopState::Expired() const { return stop && NowMs() > deadline_ms; }

Conn::Conn(int fd, PeerCounters* counters, const StopState& stop)
    : fd_(fd), counters_(counters), stop_(stop) {
  SetTimeouts(fd_);
}

Conn::~Conn() { close(fd_); }

bool Conn::WriteAll(const void* data, size_t len) {
  const char* p = static_cast<const char*>(data);
  while (len > 0) {
    // A stopping sender ends its message early; the reader sees EOF.
    if (stop_.stop) return false;
    ssize_t n = send(fd_, p, len, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return false;
    }
    counters_->tx_bytes += n;
    p += n;
    len -= n;
  }
  return true;
}

bool Conn::WriteZeros(uint64_t len) {
  while (len > 0) {
    size_t n = std::min<uint64_t>(len, kChunk);
    if (!WriteAll(kZeros, n)) return false;
    len -= n;
  }
  return true;
}

bool Conn::ReadFull(void* data, size_t len) {
  char* p = static_cast<char*>(data);
  while (len > 0) {
    ssize_t n = recv(fd_, p, len, 0);
    if (n == 0) return false;
    if (n < 0) {
      if ((errno == EAGAIN || errno == EINTR) && !stop_.Expired()) continue;
      return false;
    }
    counters_->rx_bytes += n;
    p += n;
    len -= n;
  }
  return true;
}

bool Conn::Discard(uint64_t len) {
  static thread_local char sink[kChunk];
  while (len > 0) {
    size_t n = std::min<uint64_t>(len, kChunk);
    if (!ReadFull(sink, n)) return false;
    len -= n;
  }
  return true;
}

bool Conn::WriteRequest(uint64_t len) {
  unsigned char b[8];
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(len >> (8 * i));
  return WriteAll(b, 8);
}

bool Conn::ReadRequest(uint64_t* len) {
  unsigned char b[8];
  if (!ReadFull(b, 8)) return false;
  *len = 0;
  for (int i = 0; i < 8; ++i) *len |= static_cast<uint64_t>(b[i]) << (8 * i);
  return true;
}

void Conn::Drain() {
  shutdown(fd_, SHUT_WR);
  static thread_local char sink[kChunk];
  while (true) {
    ssize_t n = recv(fd_, sink, sizeof sink, 0);
    if (n > 0) {
      counters_->rx_bytes += n;
      continue;
    }
    if (n < 0 && (errno == EAGAIN || errno == EINTR) && !stop_.Expired())
      continue;
    return;
  }
}

int ListenTcp(int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0)
    throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_ANY);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(fd, 64) != 0) {
    int err = errno;
    close(fd);
    throw std::runtime_error("listen on port " + std::to_string(port) + ": " +
                             std::strerror(err));
  }
  return fd;
}

int ConnectTcp(const std::string& ip, int port, const StopState& stop,
               std::chrono::milliseconds timeout) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  if (inet_pton(AF_INET, ip.c_str(), &addr.sin_addr) != 1) return -1;
  const auto deadline = Clock::now() + timeout;
  while (!stop.stop && Clock::now() < deadline) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0)
      return fd;
    close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return -1;
}

int AcceptTcp(int listen_fd, std::string* peer_ip) {
  pollfd p{listen_fd, POLLIN, 0};
  if (poll(&p, 1, 200) <= 0) return -1;
  sockaddr_in addr{};
  socklen_t len = sizeof addr;
  int fd = accept4(listen_fd, reinterpret_cast<sockaddr*>(&addr), &len,
                   SOCK_CLOEXEC);
  if (fd < 0) return -1;
  char buf[INET_ADDRSTRLEN] = {};
  inet_ntop(AF_INET, &addr.sin_addr, buf, sizeof buf);
  *peer_ip = buf;
  return fd;
}

}  // namespace trainsim
