#pragma once

// For the `trainscope` CLI's tests: an HTTP server on 127.0.0.1 that
// misbehaves on purpose (drips, stalls, floods, sends escape sequences),
// written on raw sockets so it can do what a well-behaved library would
// not; and a runner for the built `trainscope` binary.

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace trainscope::testing {

class ScriptedHttpServer {
 public:
  // Runs on a thread of its own for each connection, once the request's
  // header has been read (`request`: its first line and headers).
  using Handler = std::function<void(int fd, const std::string& request)>;

  explicit ScriptedHttpServer(Handler handler);
  // Stops accepting, shuts open connections down (a blocked send returns),
  // joins every thread.
  ~ScriptedHttpServer();
  ScriptedHttpServer(const ScriptedHttpServer&) = delete;
  ScriptedHttpServer& operator=(const ScriptedHttpServer&) = delete;

  std::string url() const;
  // True once the destructor began: a dripping handler ends.
  bool stopping() const { return stopping_; }
  // Bytes the handlers sent in all (Send() adds to it).
  size_t bytes_sent() const { return bytes_sent_; }

  // Sends all of `data`; false once the client is gone.
  bool Send(int fd, std::string_view data);
  // Sends `data` one byte every `gap` until done, stopping() or the client
  // leaves.
  void Drip(int fd, std::string_view data, std::chrono::milliseconds gap);

 private:
  void AcceptLoop();

  Handler handler_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stopping_{false};
  std::atomic<size_t> bytes_sent_{0};
  std::mutex mutex_;
  std::vector<int> open_fds_;
  std::vector<std::thread> connections_;
  std::thread accept_thread_;
};

// "HTTP/1.1 <status>" with Content-Length and Connection: close.
std::string HttpResponse(int status, std::string_view body,
                         std::string_view content_type = "application/json");

// A loopback port nothing listens on (bound, then released).
int ClosedPort();

struct CliResult {
  int exit_code = -1;  // 128 + signal when killed at the deadline
  std::string out;
  std::string err;
  std::chrono::milliseconds took{};
  long max_rss_kib = 0;  // the child's peak resident set
};

// Runs TRAINSCOPE_CLI_BIN with `args`, killed after `deadline`.
CliResult RunCli(const std::vector<std::string>& args,
                 std::chrono::milliseconds deadline = std::chrono::seconds(30));

}  // namespace trainscope::testing
