#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "http/auth.h"
#include "http/connections.h"
#include "http/routes.h"
#include "http/web_config.h"
#include "trainscope/log_limiter.h"
#include "trainscope/status.h"
#include "trainscope/unique_fd.h"

struct MHD_Daemon;
struct MHD_Connection;

namespace trainscope {

// Counters for the server's self-metrics and the reliability bench.
struct HttpServerStats {
  uint64_t open_connections = 0;
  uint64_t rejected_limit_total =
      0;  // closed at accept: --http-max-connections
  uint64_t rejected_per_ip_total = 0;  // closed at accept: per-address cap
  uint64_t header_timeouts_total = 0;  // closed: request header not in time
  uint64_t query_floods_total = 0;     // answered 414: too many parameters
  uint64_t unauthorized_total = 0;     // answered 401 or 403
  uint64_t throttled_total = 0;  // answered 429: wrong credentials too often
  uint64_t abandoned_total = 0;  // async requests whose client left first
};

// The agent's one HTTP server: /metrics, /healthz, /readyz, /api/v1/pods,
// /api/v1/report (see AgentRoutes). Unknown paths get 404, other methods
// than GET/HEAD 405.
//
// Event-driven (libmicrohttpd, epoll, a few loop threads), so an idle or slow
// connection costs a socket and a small buffer, never a thread. The server
// owns its listening socket and accepts itself: a connection over the limits
// is closed at once instead of waiting in the kernel's backlog ahead of a
// scrape, and a request header that is not complete in time ends the
// connection even when the client keeps dribbling bytes.
//
// With a web config (--web-config-file) it speaks TLS only and every path
// but the probes (/healthz, /readyz) needs credentials: 401 without or with
// wrong ones, 403 without a valid client certificate where one is required.
class HttpServer {
 public:
  explicit HttpServer(HttpHandlers handlers, HttpLimits limits = {},
                      WebConfig web = {});
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds now, so "port in use" is a start-up error with a clear message.
  Status Bind(const std::string& host, int port);
  // Starts accepting (after a successful Bind).
  void Start();
  // Closes the listener and every connection; returns within milliseconds.
  void Stop();
  int port() const { return port_; }
  const HttpLimits& limits() const { return limits_; }
  HttpServerStats stats() const;

 private:
  Status StartDaemon();
  void AcceptLoop();
  void AcceptReady();

  friend struct HttpServerCallbacks;  // libmicrohttpd's C callbacks
  int Respond(MHD_Connection* connection, const char* url, const char* method,
              void** request_ctx);
  // An async route: the connection is suspended (it holds no thread) until
  // the reply comes, then resumed and answered (QueuePending).
  struct Pending;
  // 414 for a request whose query HttpServerCallbacks::OnUri cut.
  int RefuseQueryFlood(MHD_Connection* connection);
  int RespondLater(MHD_Connection* connection, HttpRequest request,
                   void** request_ctx);
  int QueuePending(MHD_Connection* connection);
  void ForgetPending(MHD_Connection* connection);
  // Answers every suspended request with 503 so the daemon can stop.
  void ResumeAllPending();
  // Waits (up to `limit`) until every async answer has been sent.
  void DrainAnswering(std::chrono::milliseconds limit);
  // Marks suspended requests whose client closed its connection (a
  // suspended connection is not polled by libmicrohttpd, so nothing else
  // would notice before the reply).
  void DetectAbandoned();
  static int Queue(MHD_Connection* connection, HttpResponse& response);
  // Why a request may not see `path`; nullopt when it may.
  std::optional<HttpResponse> Refusal(MHD_Connection* connection,
                                      const std::string& path);
  void Warn(const std::string& key, std::string message);

  HttpRouter router_;
  HttpLimits limits_;
  WebConfig web_;
  HttpAuthenticator auth_;
  HttpConnectionTable connections_;
  UniqueFd listen_fd_;
  UniqueFd wake_fd_;  // eventfd: Stop() wakes the accept loop
  MHD_Daemon* daemon_ = nullptr;
  std::thread accept_thread_;
  std::mutex pending_mu_;
  std::unordered_map<MHD_Connection*, std::shared_ptr<Pending>> pending_;
  // Async requests not yet completed (answer not yet sent), suspended or
  // not: Stop() lets them finish sending before the daemon closes them.
  std::unordered_set<MHD_Connection*> answering_;
  int port_ = 0;
  LogLimiter log_limiter_;  // refusals repeat; log them now and then
  std::atomic<uint64_t> rejected_limit_{0};
  std::atomic<uint64_t> rejected_per_ip_{0};
  std::atomic<uint64_t> header_timeouts_{0};
  std::atomic<uint64_t> query_floods_{0};
  std::atomic<uint64_t> unauthorized_{0};
  std::atomic<uint64_t> throttled_{0};
  std::atomic<uint64_t> abandoned_{0};
};

}  // namespace trainscope
