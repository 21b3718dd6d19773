#include "http_server.h"

#include <httplib.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>

#include "report_page/page.h"

namespace trainscope {
namespace {

constexpr const char* kMetricsContentType =
    "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kJsonContentType = "application/json";

// Runs a handler; an exception becomes a 500 rather than a dead server.
template <typename F>
void Guarded(const char* path, httplib::Response& res, F&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    spdlog::error("[http] {} failed: {}", path, e.what());
    res.status = 500;
    res.set_content(std::string("internal error: ") + e.what() + "\n",
                    "text/plain");
  }
}

}  // namespace

HttpServer::HttpServer(HttpHandlers handlers)
    : handlers_(std::move(handlers)),
      server_(std::make_unique<httplib::Server>()) {
  // Scrapes are small and few; a handful of workers is plenty and keeps the
  // agent's thread count (and RSS) low.
  server_->new_task_queue = [] { return new httplib::ThreadPool(4); };
  // Short read and keep-alive timeouts bound how long an idle or slow client
  // can hold a worker, and so how long shutdown waits: httplib joins its
  // workers, and an idle keep-alive connection is only noticed after this
  // timeout. Scrapers send their request in one packet and simply reconnect.
  server_->set_read_timeout(1, 0);
  server_->set_write_timeout(5, 0);
  server_->set_keep_alive_timeout(1);
  server_->set_payload_max_length(64 * 1024);
  // httplib's default also sets SO_REUSEPORT, which would let a second agent
  // bind the same port and silently take half the scrapes.
  server_->set_socket_options([](int sock) {
    int yes = 1;
    ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  });
  Routes();
}

HttpServer::~HttpServer() { Stop(); }

void HttpServer::Routes() {
  auto& s = *server_;
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    Guarded("/metrics", res,
            [&] { res.set_content(handlers_.metrics(), kMetricsContentType); });
  });
  s.Get("/healthz", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("ok\n", "text/plain");
  });
  s.Get("/readyz", [this](const httplib::Request&, httplib::Response& res) {
    Guarded("/readyz", res, [&] {
      std::string why;
      if (handlers_.ready(&why)) {
        res.set_content("ready\n", "text/plain");
      } else {
        res.status = 503;
        res.set_content("not ready: " + why + "\n", "text/plain");
      }
    });
  });
  s.Get("/api/v1/pods",
        [this](const httplib::Request&, httplib::Response& res) {
          Guarded("/api/v1/pods", res, [&] {
            res.set_content(handlers_.pods_json(), kJsonContentType);
          });
        });
  s.Get("/api/v1/report",
        [this](const httplib::Request& req, httplib::Response& res) {
          Guarded("/api/v1/report", res, [&] {
            std::string format = req.get_param_value("format");
            if (!format.empty() && format != "json" && format != "text") {
              res.status = 400;
              res.set_content("format must be json or text\n", "text/plain");
              return;
            }
            HttpResponse r = handlers_.report(format);
            res.status = r.status;
            res.set_content(r.body, r.content_type);
          });
        });
  s.Get("/", [this](const httplib::Request&, httplib::Response& res) {
    Guarded("/", res, [&] {
      if (!handlers_.page) {
        res.status = 404;
        return;
      }
      HttpResponse r = handlers_.page();
      res.status = r.status;
      res.set_header("Content-Security-Policy",
                     std::string(page::kContentSecurityPolicyHeader));
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Cache-Control", "no-store");
      res.set_content(r.body, r.content_type);
    });
  });
  const char* known[] = {"/",       "/metrics",     "/healthz",
                         "/readyz", "/api/v1/pods", "/api/v1/report"};
  auto not_allowed = [](const httplib::Request& req, httplib::Response& res) {
    res.status = 405;
    res.set_header("Allow", "GET, HEAD");
    res.set_content("method " + req.method + " not allowed\n", "text/plain");
  };
  for (const char* path : known) {
    s.Post(path, not_allowed);
    s.Put(path, not_allowed);
    s.Delete(path, not_allowed);
    s.Patch(path, not_allowed);
    s.Options(path, not_allowed);
  }
  s.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404 && res.body.empty()) {
      res.set_content(
          "not found: " + req.path +
              "\n(try /, /metrics, /healthz, /readyz, /api/v1/pods, "
              "/api/v1/report)\n",
          "text/plain");
    }
  });
  s.set_exception_handler([](const httplib::Request& req,
                             httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown";
    try {
      if (ep) std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    spdlog::error("[http] {} {}: {}", req.method, req.path, what);
    res.status = 500;
    res.set_content("internal error\n", "text/plain");
  });
}

Status HttpServer::Bind(const std::string& host, int port) {
  errno = 0;
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
    if (port_ < 0) port_ = 0;
  } else if (server_->bind_to_port(host, port)) {
    port_ = port;
  }
  if (port_ <= 0) {
    int err = errno;
    return Status::Error(
        "cannot listen on " + host + ":" + std::to_string(port) + ": " +
        (err ? std::strerror(err) : "address invalid or already in use"));
  }
  return Status::Ok();
}

void HttpServer::Start() {
  thread_ = std::thread([this] {
    if (!server_->listen_after_bind()) {
      spdlog::debug("[http] listener stopped");
    }
  });
}

void HttpServer::Stop() {
  if (!server_) return;
  if (thread_.joinable()) {
    // httplib's stop() is a no-op until the accept loop runs; a stop that
    // races a fresh Start() would otherwise leave the join hanging.
    for (int i = 0; i < 200 && !server_->is_running(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    server_->stop();
    thread_.join();
  }
}

}  // namespace trainscope
