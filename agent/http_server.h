#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <thread>

#include "trainscope/status.h"

namespace httplib {
class Server;
}

namespace trainscope {

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
};

// What the endpoints serve; each handler may run on any server thread.
struct HttpHandlers {
  std::function<std::string()> metrics;
  std::function<bool(std::string* why)> ready;
  std::function<std::string()> pods_json;
  // format: "" or "json" -> JSON, "text" -> a table.
  std::function<HttpResponse(const std::string& format)> report;
  // GET /: the report page (HTML); served with a Content-Security-Policy.
  std::function<HttpResponse()> page;
};

// The agent's one HTTP server: / (report page), /metrics, /healthz, /readyz,
// /api/v1/pods, /api/v1/report. Unknown paths get 404, other methods than
// GET/HEAD 405.
class HttpServer {
 public:
  explicit HttpServer(HttpHandlers handlers);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds now, so "port in use" is a start-up error with a clear message.
  Status Bind(const std::string& host, int port);
  void Start();
  void Stop();
  int port() const { return port_; }

 private:
  void Routes();

  HttpHandlers handlers_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  int port_ = 0;
};

}  // namespace trainscope
