#include "http/server.h"

#include <microhttpd.h>
#include <netdb.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <exception>
#include <vector>

#include "http/tls.h"
#include "trainscope/log_limiter.h"

namespace trainscope {
namespace {

using Clock = HttpConnectionTable::Clock;

// How often the accept loop checks header deadlines when nothing arrives.
constexpr int kSweepMs = 100;
// Accepts per wake-up, so a connection flood cannot delay the sweep.
constexpr int kAcceptBurst = 256;
// Descriptors the rest of the agent needs besides HTTP connections.
constexpr rlim_t kReservedFds = 256;

int SocketFd(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
  return info ? info->connect_fd : -1;
}

// Idle sockets are cheap but each is a descriptor: raise the soft limit to
// what the connection cap needs, or lower the cap to what the hard limit
// allows.
HttpLimits FitFileLimit(HttpLimits limits) {
  rlimit rl{};
  if (getrlimit(RLIMIT_NOFILE, &rl) != 0) return limits;
  const rlim_t needed =
      static_cast<rlim_t>(limits.max_connections) + kReservedFds;
  if (rl.rlim_cur < needed) {
    rlimit raised = rl;
    raised.rlim_cur =
        rl.rlim_max == RLIM_INFINITY ? needed : std::min(needed, rl.rlim_max);
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) rl = raised;
  }
  if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < needed) {
    int fitted = static_cast<int>(
        rl.rlim_cur > kReservedFds + 16 ? rl.rlim_cur - kReservedFds : 16);
    spdlog::warn(
        "[http] open-file limit {} allows {} connections, not {}; raise "
        "`ulimit -n` to serve more",
        rl.rlim_cur, fitted, limits.max_connections);
    limits.max_connections = fitted;
  }
  return limits;
}

Status ListenError(const std::string& host, int port, const std::string& why) {
  return Status::Error("cannot listen on " + host + ":" + std::to_string(port) +
                       ": " + why);
}

// A listening socket on the first address `host` resolves to; "" means
// every address. Only SO_REUSEADDR: SO_REUSEPORT would let a second agent
// bind the same port and silently take half the scrapes.
Status OpenListener(const std::string& host, int port, UniqueFd* out,
                    int* bound_port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  const std::string service = std::to_string(port);
  if (int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(),
                           service.c_str(), &hints, &found);
      rc != 0) {
    return ListenError(host, port, gai_strerror(rc));
  }
  std::string why = "no usable address";
  for (addrinfo* ai = found; ai; ai = ai->ai_next) {
    UniqueFd fd(::socket(ai->ai_family,
                         ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC,
                         ai->ai_protocol));
    if (!fd.valid()) {
      why = std::strerror(errno);
      continue;
    }
    int yes = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) != 0 ||
        ::listen(fd.get(), SOMAXCONN) != 0) {
      why = std::strerror(errno);
      continue;
    }
    sockaddr_storage local{};
    socklen_t len = sizeof local;
    ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len);
    *bound_port = ntohs(local.ss_family == AF_INET6
                            ? reinterpret_cast<sockaddr_in6*>(&local)->sin6_port
                            : reinterpret_cast<sockaddr_in*>(&local)->sin_port);
    *out = std::move(fd);
    freeaddrinfo(found);
    return Status::Ok();
  }
  freeaddrinfo(found);
  return ListenError(host, port, why);
}

// RFC 9112 3.2.2: a server must accept the absolute form of the request
// target ("GET http://host:9476/metrics", as proxies send it) and route by
// its path.
std::string OriginFormPath(std::string_view target) {
  for (std::string_view scheme : {"http://", "https://"}) {
    if (target.size() < scheme.size() ||
        !std::equal(scheme.begin(), scheme.end(), target.begin(),
                    [](char a, char b) {
                      return a == std::tolower(static_cast<unsigned char>(b));
                    })) {
      continue;
    }
    const size_t slash = target.find('/', scheme.size());
    return slash == std::string_view::npos ? "/"
                                           : std::string(target.substr(slash));
  }
  return std::string(target);
}

// The client's address as the per-address limits key it.
std::string ClientKey(MHD_Connection* connection) {
  const MHD_ConnectionInfo* info =
      MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
  if (!info || !info->client_addr) return {};
  const sockaddr* addr = info->client_addr;
  const socklen_t len =
      addr->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  return HttpConnectionTable::AddressKey(addr, len);
}

MHD_Result CollectQuery(void* cls, MHD_ValueKind, const char* key,
                        const char* value) {
  auto* query = static_cast<std::map<std::string, std::string>*>(cls);
  if (key) query->emplace(key, value ? value : "");
  return MHD_YES;
}

void LogFromMhd(void*, const char* fmt, va_list ap) {
  char line[512];
  std::vsnprintf(line, sizeof line, fmt, ap);
  std::string_view text(line);
  while (!text.empty() && text.back() == '\n') text.remove_suffix(1);
  spdlog::debug("[http] libmicrohttpd: {}", text);
}

}  // namespace

// libmicrohttpd's C callbacks; none lets an exception escape.
struct HttpServerCallbacks {
  // libmicrohttpd calls this once when the header is complete, then again
  // for each piece of body and once at its end. A response queued in the
  // first call closes the connection afterwards, so a body-less GET or HEAD
  // is answered in the second call (keep-alive works); anything with a body
  // is refused at once and the connection closed rather than read.
  static MHD_Result OnRequest(void* cls, MHD_Connection* connection,
                              const char* url, const char* method, const char*,
                              const char*, size_t* upload_data_size,
                              void** request_ctx) {
    auto* server = static_cast<HttpServer*>(cls);
    if (*request_ctx == &kAnswered) {
      *upload_data_size = 0;  // discard
      return MHD_YES;
    }
    if (*request_ctx == &kSuspended) {  // resumed: the reply is there
      *request_ctx = &kAnswered;
      return server->QueuePending(connection) ? MHD_YES : MHD_NO;
    }
    if (*request_ctx == &kTooManyParameters) {
      server->connections_.HeaderReceived(SocketFd(connection));
      *request_ctx = &kAnswered;
      *upload_data_size = 0;
      return server->RefuseQueryFlood(connection) ? MHD_YES : MHD_NO;
    }
    if (*request_ctx == nullptr) {
      server->connections_.HeaderReceived(SocketFd(connection));
      if (WithoutBody(connection, method)) {
        *request_ctx = &kDeferred;
        return MHD_YES;
      }
    }
    *request_ctx = &kAnswered;
    *upload_data_size = 0;
    return server->Respond(connection, url, method, request_ctx) ? MHD_YES
                                                                 : MHD_NO;
  }

  static bool WithoutBody(MHD_Connection* connection, const char* method) {
    const std::string_view m = method ? method : "";
    return (m == "GET" || m == "HEAD") &&
           !MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                        MHD_HTTP_HEADER_CONTENT_LENGTH) &&
           !MHD_lookup_connection_value(connection, MHD_HEADER_KIND,
                                        MHD_HTTP_HEADER_TRANSFER_ENCODING);
  }

  // Called with the request target before libmicrohttpd splits its query
  // into parameters (MHD_OPTION_URI_LOG_CALLBACK); the return value is the
  // request's context. Too many parameters: the query is cut after its '?'
  // in libmicrohttpd's own (writable) read buffer, so none is parsed, and
  // the request is marked to be answered 414.
  static void* OnUri(void* cls, const char* uri, MHD_Connection*) {
    const char* query = uri ? std::strchr(uri, '?') : nullptr;
    if (query == nullptr) return nullptr;
    const auto limit =
        static_cast<HttpServer*>(cls)->limits_.max_query_parameters;
    const auto parameters =
        1 + std::count(query, query + std::strlen(query), '&');
    if (parameters <= limit) return nullptr;
    const_cast<char*>(query)[1] = '\0';
    return &kTooManyParameters;
  }

  static inline char kTooManyParameters = 0;
  static inline char kDeferred = 0;
  static inline char kAnswered = 0;
  static inline char kSuspended = 0;

  static void OnConnection(void* cls, MHD_Connection* connection, void**,
                           MHD_ConnectionNotificationCode event) {
    if (event != MHD_CONNECTION_NOTIFY_CLOSED) return;
    static_cast<HttpServer*>(cls)->connections_.Closed(SocketFd(connection));
  }

  static void OnCompleted(void* cls, MHD_Connection* connection, void**,
                          MHD_RequestTerminationCode) {
    static_cast<HttpServer*>(cls)->ForgetPending(connection);
    static_cast<HttpServer*>(cls)->connections_.RequestDone(
        SocketFd(connection), Clock::now());
  }
};

HttpServer::HttpServer(HttpHandlers handlers, HttpLimits limits, WebConfig web)
    : router_(AgentRoutes(handlers)),
      limits_(FitFileLimit(limits)),
      web_(std::move(web)),
      auth_(web_.basic_auth_users, web_.bearer_tokens),
      connections_(limits_) {}

HttpServer::~HttpServer() { Stop(); }

Status HttpServer::Bind(const std::string& host, int port) {
  if (Status s = OpenListener(host, port, &listen_fd_, &port_); !s.ok()) {
    port_ = 0;
    return s;
  }
  wake_fd_.reset(::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!wake_fd_.valid()) {
    listen_fd_.reset();
    return Status::Error(std::string("http: eventfd: ") + std::strerror(errno));
  }
  if (Status s = StartDaemon(); !s.ok()) {
    listen_fd_.reset();
    return s;
  }
  return Status::Ok();
}

Status HttpServer::StartDaemon() {
  const unsigned timeout_s = static_cast<unsigned>(
      std::max<int64_t>(1, (limits_.timeout.count() + 999) / 1000));
  // Our accept loop enforces the connection cap; libmicrohttpd's limit only
  // needs to stay out of its way.
  const unsigned mhd_limit =
      static_cast<unsigned>(limits_.max_connections + 8 * limits_.threads);
  std::vector<MHD_OptionItem> options = {
      {MHD_OPTION_THREAD_POOL_SIZE,
       static_cast<intptr_t>(std::max(1, limits_.threads)), nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, static_cast<intptr_t>(mhd_limit), nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(timeout_s),
       nullptr},
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT,
       static_cast<intptr_t>(limits_.connection_buffer_bytes), nullptr},
      {MHD_OPTION_NOTIFY_CONNECTION,
       reinterpret_cast<intptr_t>(&HttpServerCallbacks::OnConnection), this},
      {MHD_OPTION_NOTIFY_COMPLETED,
       reinterpret_cast<intptr_t>(&HttpServerCallbacks::OnCompleted), this},
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&LogFromMhd),
       nullptr},
      {MHD_OPTION_URI_LOG_CALLBACK,
       reinterpret_cast<intptr_t>(&HttpServerCallbacks::OnUri), this},
  };
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL |
                   MHD_USE_NO_LISTEN_SOCKET | MHD_USE_ITC | MHD_USE_ERROR_LOG |
                   MHD_ALLOW_SUSPEND_RESUME;
  if (web_.tls_enabled) {
    flags |= MHD_USE_TLS;
    AppendTlsOptions(web_.tls, options);
  }
  options.push_back({MHD_OPTION_END, 0, nullptr});
  daemon_ = MHD_start_daemon(flags, 0, nullptr, nullptr,
                             &HttpServerCallbacks::OnRequest, this,
                             MHD_OPTION_ARRAY, options.data(), MHD_OPTION_END);
  if (!daemon_) {
    return Status::Error("http: cannot start the libmicrohttpd daemon (" +
                         std::to_string(limits_.threads) + " threads" +
                         (web_.tls_enabled ? ", TLS" : "") + ")");
  }
  return Status::Ok();
}

void HttpServer::Start() {
  if (!daemon_ || accept_thread_.joinable()) return;
  accept_thread_ = std::thread([this] { AcceptLoop(); });
}

void HttpServer::Stop() {
  if (accept_thread_.joinable()) {
    uint64_t one = 1;
    if (::write(wake_fd_.get(), &one, sizeof one) < 0) {
      spdlog::debug("[http] wake: {}", std::strerror(errno));
    }
    accept_thread_.join();
  }
  listen_fd_.reset();
  if (daemon_) {
    ResumeAllPending();  // libmicrohttpd refuses to stop with any suspended
    // A profile that ended early at shutdown has just been answered: let
    // its answer go out before every connection is closed.
    DrainAnswering(std::chrono::seconds(2));
    MHD_stop_daemon(daemon_);  // closes every connection, joins its threads
    daemon_ = nullptr;
  }
}

void HttpServer::AcceptLoop() {
  pollfd fds[2] = {{listen_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
  while (true) {
    // With no connection open there is no deadline to watch: sleep until
    // the next one arrives (no idle wake-ups).
    const int wait_ms = connections_.open() == 0 ? -1 : kSweepMs;
    int ready = ::poll(fds, 2, wait_ms);
    if (ready > 0 && (fds[1].revents & POLLIN)) return;
    if (ready > 0 && (fds[0].revents & POLLIN)) AcceptReady();
    header_timeouts_ += connections_.ShutdownOverdue(Clock::now());
    DetectAbandoned();
  }
}

void HttpServer::AcceptReady() {
  for (int i = 0; i < kAcceptBurst; ++i) {
    sockaddr_storage peer{};
    socklen_t len = sizeof peer;
    int fd = ::accept4(listen_fd_.get(), reinterpret_cast<sockaddr*>(&peer),
                       &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        Warn("accept", std::string("accept: ") + std::strerror(errno) +
                           " (raise `ulimit -n` or lower "
                           "--http-max-connections)");
        // The pending connection stays in the backlog; do not spin on it.
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      }
      return;
    }
    const auto* addr = reinterpret_cast<const sockaddr*>(&peer);
    switch (connections_.Admit(fd, addr, len, Clock::now())) {
      case HttpConnectionTable::Verdict::kAdmitted:
        break;
      case HttpConnectionTable::Verdict::kTooMany:
        ++rejected_limit_;  // counted before the client can see the close
        ::close(fd);
        Warn("limit", std::to_string(limits_.max_connections) +
                          " connections open (--http-max-connections): closing "
                          "new ones");
        continue;
      case HttpConnectionTable::Verdict::kTooManyFromAddress:
        ++rejected_per_ip_;
        ::close(fd);
        Warn("per_ip", "one client address holds " +
                           std::to_string(limits_.max_connections_per_ip) +
                           " connections (--http-max-connections-per-ip): "
                           "closing its new ones");
        continue;
    }
    // On failure libmicrohttpd has closed the socket already.
    if (MHD_add_connection(daemon_, fd, addr, len) != MHD_YES) {
      connections_.Closed(fd);
    }
  }
}

void HttpServer::Warn(const std::string& key, std::string message) {
  if (auto line = log_limiter_.Pass(key, std::move(message))) {
    spdlog::warn("[http] {}", *line);
  }
}

std::optional<HttpResponse> HttpServer::Refusal(MHD_Connection* connection,
                                                const std::string& path) {
  // Probes stay open: the kubelet sends no credentials, and they tell only
  // "alive" / "ready or why not".
  if (path == "/healthz" || path == "/readyz") return std::nullopt;
  const ClientAuth client_auth =
      web_.tls_enabled ? web_.tls.client_auth : ClientAuth::kNone;
  if (client_auth != ClientAuth::kNone) {
    const ClientCert cert = VerifyClientCert(connection);
    if (cert == ClientCert::kInvalid ||
        (cert == ClientCert::kNone &&
         client_auth == ClientAuth::kRequireVerify)) {
      ++unauthorized_;
      Warn("client_cert",
           "refused a request without a valid client "
           "certificate (tls_server_config.client_auth_type)");
      return HttpResponse{403, "text/plain",
                          "a valid client certificate is required\n"};
    }
  }
  if (!auth_.enabled()) return std::nullopt;
  const char* header = MHD_lookup_connection_value(
      connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
  const auto verdict = auth_.Check(header ? header : "", ClientKey(connection));
  if (verdict == HttpAuthenticator::Verdict::kAllowed) return std::nullopt;
  if (verdict == HttpAuthenticator::Verdict::kThrottled) {
    ++throttled_;
    Warn("throttled",
         "answered 429 without checking credentials: too many wrong ones "
         "from one address, or every bcrypt check busy");
    return HttpResponse{429,
                        "text/plain",
                        "too many failed logins: retry later\n",
                        {{"Retry-After", "1"}}};
  }
  ++unauthorized_;
  if (verdict == HttpAuthenticator::Verdict::kDenied) {
    Warn("auth", "refused a request with wrong credentials (web config)");
  }
  return HttpResponse{401,
                      "text/plain",
                      "unauthorized\n",
                      {{"WWW-Authenticate", auth_.Challenge()}}};
}

int HttpServer::RefuseQueryFlood(MHD_Connection* connection) {
  ++query_floods_;
  Warn("query_flood", "answered 414 to a request with more than " +
                          std::to_string(limits_.max_query_parameters) +
                          " query parameters");
  HttpResponse res{414, "text/plain",
                   "too many query parameters (at most " +
                       std::to_string(limits_.max_query_parameters) + ")\n"};
  return Queue(connection, res);
}

int HttpServer::Respond(MHD_Connection* connection, const char* url,
                        const char* method, void** request_ctx) {
  HttpResponse res;
  HttpRequest req;
  try {
    req.method = method ? method : "";
    req.path = OriginFormPath(url ? url : "");
    if (auto refused = Refusal(connection, req.path)) {
      return Queue(connection, *refused);
    }
    MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &CollectQuery,
                              &req.query);
    const char* accept = MHD_lookup_connection_value(
        connection, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT_ENCODING);
    req.accept_encoding = accept ? accept : "";
    if (router_.IsAsync(req.path)) {
      return RespondLater(connection, req, request_ctx);
    }
    res = router_.Handle(req);
    MaybeGzip(req, res);
  } catch (const std::exception& e) {  // bad_alloc and the like
    spdlog::error("[http] {} {}: {}", req.method, req.path, e.what());
    res = HttpResponse{500, "text/plain", "internal error\n"};
  }
  return Queue(connection, res);
}

// A suspended request. `mu` orders the reply (any thread) against the
// suspension (a server thread): a reply that comes before the suspension is
// queued at once instead.
struct HttpServer::Pending {
  std::mutex mu;
  MHD_Connection* connection = nullptr;
  int fd = -1;  // the connection's socket, watched for the client leaving
  std::shared_ptr<std::atomic<bool>> client_gone =
      std::make_shared<std::atomic<bool>>(false);
  HttpRequest request;
  bool suspended = false;
  bool replied = false;
  HttpResponse response;
};

int HttpServer::RespondLater(MHD_Connection* connection, HttpRequest req,
                             void** request_ctx) {
  auto pending = std::make_shared<Pending>();
  pending->connection = connection;
  pending->fd = SocketFd(connection);
  req.client_gone = pending->client_gone;
  pending->request = req;
  {
    std::lock_guard lock(pending_mu_);
    pending_[connection] = pending;
    answering_.insert(connection);
  }
  router_.HandleAsync(req, [pending](HttpResponse res) {
    std::lock_guard lock(pending->mu);
    if (pending->replied) return;  // answered already (a 503 at shutdown)
    MaybeGzip(pending->request, res);
    pending->response = std::move(res);
    pending->replied = true;
    if (pending->suspended) MHD_resume_connection(pending->connection);
  });
  {
    std::lock_guard lock(pending->mu);
    if (!pending->replied) {
      // The next call of OnRequest (after the resume) queues the reply.
      *request_ctx = &HttpServerCallbacks::kSuspended;
      MHD_suspend_connection(connection);
      pending->suspended = true;
      return true;
    }
  }
  // Answered while the handler ran (a refusal): no need to suspend.
  {
    std::lock_guard lock(pending_mu_);
    pending_.erase(connection);
  }
  return Queue(connection, pending->response);
}

int HttpServer::QueuePending(MHD_Connection* connection) {
  std::shared_ptr<Pending> pending;
  {
    std::lock_guard lock(pending_mu_);
    auto it = pending_.find(connection);
    if (it == pending_.end()) return false;
    pending = it->second;
    pending_.erase(it);
  }
  std::lock_guard lock(pending->mu);
  return Queue(connection, pending->response);
}

void HttpServer::ForgetPending(MHD_Connection* connection) {
  std::lock_guard lock(pending_mu_);
  answering_.erase(connection);
  auto it = pending_.find(connection);
  if (it == pending_.end()) return;
  // The client went away: a late reply must not touch the connection.
  std::lock_guard pending_lock(it->second->mu);
  it->second->replied = true;
  pending_.erase(it);
}

void HttpServer::DrainAnswering(std::chrono::milliseconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  for (;;) {
    {
      std::lock_guard lock(pending_mu_);
      if (answering_.empty()) return;
    }
    if (std::chrono::steady_clock::now() >= deadline) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void HttpServer::DetectAbandoned() {
  std::lock_guard lock(pending_mu_);
  for (auto& [connection, pending] : pending_) {
    if (pending->fd < 0 || pending->client_gone->load()) continue;
    // POLLRDHUP: the client shut its side (closed); POLLHUP/POLLERR: reset.
    // Bytes it sent ahead (a pipelined request) only raise POLLIN.
    pollfd p{pending->fd, POLLRDHUP, 0};
    if (::poll(&p, 1, 0) == 1 &&
        (p.revents & (POLLRDHUP | POLLHUP | POLLERR))) {
      pending->client_gone->store(true);
      ++abandoned_;
      spdlog::debug(
          "[http] {}: the client closed the connection before the "
          "answer",
          pending->request.path);
    }
  }
}

void HttpServer::ResumeAllPending() {
  std::lock_guard lock(pending_mu_);
  for (auto& [connection, pending] : pending_) {
    std::lock_guard pending_lock(pending->mu);
    if (!pending->replied) {
      pending->response =
          HttpResponse{503, "text/plain", "the agent is shutting down\n"};
      pending->replied = true;
      if (pending->suspended) MHD_resume_connection(connection);
    }
  }
}

int HttpServer::Queue(MHD_Connection* connection, HttpResponse& res) {
  MHD_Response* response = MHD_create_response_from_buffer(
      res.body.size(), res.body.data(), MHD_RESPMEM_MUST_COPY);
  if (!response) return false;
  if (!res.content_type.empty()) {
    MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
                            res.content_type.c_str());
  }
  for (const auto& [name, value] : res.headers) {
    MHD_add_response_header(response, name.c_str(), value.c_str());
  }
  MHD_Result queued = MHD_queue_response(
      connection, static_cast<unsigned>(res.status), response);
  MHD_destroy_response(response);
  return queued == MHD_YES;
}

HttpServerStats HttpServer::stats() const {
  return HttpServerStats{
      .open_connections = connections_.open(),
      .rejected_limit_total = rejected_limit_.load(),
      .rejected_per_ip_total = rejected_per_ip_.load(),
      .header_timeouts_total = header_timeouts_.load(),
      .query_floods_total = query_floods_.load(),
      .unauthorized_total = unauthorized_.load(),
      .throttled_total = throttled_.load(),
      .abandoned_total = abandoned_.load(),
  };
}

}  // namespace trainscope
