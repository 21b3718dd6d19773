#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <unordered_map>

namespace trainscope {

// The limits that keep one client from starving the others (see
// docs/reliability.md, "HTTP server").
struct HttpLimits {
  // Open connections in all; a connection beyond it is closed at accept.
  int max_connections = 1024;
  // Open connections from one client address; beyond it, closed at accept.
  int max_connections_per_ip = 128;
  // A client has this long to send a complete request header after it
  // connects or after its previous response; a transfer that makes no
  // progress for this long is dropped too.
  std::chrono::milliseconds timeout{5000};
  // Event-loop threads; each serves its share of the connections.
  int threads = 4;
  // Per-connection buffer: bounds the request line plus headers
  // (larger requests get 414 or 431).
  size_t connection_buffer_bytes = 16 * 1024;
  // Query parameters one request may carry (the endpoints read at most 6);
  // more are answered 414. libmicrohttpd keeps each one in the connection's
  // buffer, and once that is full cannot even build an error answer.
  int max_query_parameters = 64;
};

// Book-keeping for open connections, keyed by socket: admission against the
// limits at accept, and the request-header deadline that an event loop's
// inactivity timeout alone cannot enforce (a client dribbling one header
// byte a second is never inactive). Thread-safe.
class HttpConnectionTable {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Verdict { kAdmitted, kTooMany, kTooManyFromAddress };

  explicit HttpConnectionTable(const HttpLimits& limits);

  // Records an accepted socket, or says why it must be closed.
  Verdict Admit(int fd, const sockaddr* addr, socklen_t len,
                Clock::time_point now);
  // The request's header is complete: no header deadline until it is done.
  void HeaderReceived(int fd);
  // The response went out; the next request's header has a fresh deadline.
  void RequestDone(int fd, Clock::time_point now);
  // The connection is gone (its socket is still open when this is called).
  void Closed(int fd);
  // shutdown()s every socket whose header deadline passed, so the event loop
  // sees it end and closes it; returns how many.
  int ShutdownOverdue(Clock::time_point now);

  size_t open() const;

  // Key for per-address counting; IPv4-mapped IPv6 counts as IPv4.
  static std::string AddressKey(const sockaddr* addr, socklen_t len);

 private:
  struct Entry {
    std::string address;
    bool awaiting_header = true;
    Clock::time_point deadline;
  };
  void EraseLocked(std::unordered_map<int, Entry>::iterator it);

  HttpLimits limits_;
  mutable std::mutex mu_;
  std::unordered_map<int, Entry> by_fd_;
  std::unordered_map<std::string, int> per_address_;
};

}  // namespace trainscope
