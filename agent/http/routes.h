#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace trainscope {

struct HttpResponse {
  int status = 200;
  std::string content_type;
  std::string body;
  // Extra headers (Allow, Content-Encoding, ...).
  std::vector<std::pair<std::string, std::string>> headers = {};
};

struct HttpRequest;

// What the endpoints serve; each handler may run on any server thread.
struct HttpHandlers {
  std::function<std::string()> metrics;
  std::function<bool(std::string* why)> ready;
  std::function<std::string()> pods_json;
  // format: "" or "json" -> JSON, "text" -> a table.
  std::function<HttpResponse(const std::string& format)> report;
  // GET /: the report page (HTML); served with a Content-Security-Policy.
  std::function<HttpResponse()> page;
  // GET /api/v1/profile: answers later, through `reply` (called once, from
  // any thread), so a 30 s profile holds no server thread.
  std::function<void(const HttpRequest&,
                     std::function<void(HttpResponse)> reply)>
      profile;
  // GET /api/v1/profile/top: a pod's top functions from the continuous
  // profile (JSON).
  std::function<HttpResponse(const HttpRequest&)> profile_top;
};

// One parsed request, as the routes see it.
struct HttpRequest {
  std::string method;  // "GET", "HEAD", "POST", ...
  std::string path;    // without the query string
  std::map<std::string, std::string> query;
  std::string accept_encoding;
  // Set for a request answered later (an async route) once its client has
  // closed the connection: long work (a profile) can end early instead of
  // holding its resources for nobody.
  std::shared_ptr<const std::atomic<bool>> client_gone;

  bool ClientGone() const { return client_gone && client_gone->load(); }
  std::string Query(const std::string& name) const {
    auto it = query.find(name);
    return it == query.end() ? std::string() : it->second;
  }
};

// Answers a request later, once, from any thread.
using HttpReply = std::function<void(HttpResponse)>;

// A path and what a GET (or HEAD) of it answers: `get` at once, or
// `get_async` later (the server suspends the connection meanwhile).
struct HttpRoute {
  std::string path;
  std::function<HttpResponse(const HttpRequest&)> get;
  std::function<void(const HttpRequest&, HttpReply)> get_async = nullptr;
};

// The agent's endpoints; adding one is one line in AgentRoutes().
std::vector<HttpRoute> AgentRoutes(const HttpHandlers& handlers);

// Answers requests from a route table: GET and HEAD go to the route, other
// methods on a known path get 405 with Allow, unknown paths 404, and a
// throwing handler 500 (the server lives on). Thread-safe (const).
class HttpRouter {
 public:
  explicit HttpRouter(std::vector<HttpRoute> routes);
  HttpResponse Handle(const HttpRequest& request) const;
  // True when `path` answers through HandleAsync.
  bool IsAsync(const std::string& path) const;
  // Calls `reply` exactly once: later for an async route, at once for a
  // refusal (unknown path, wrong method, a throwing handler: 500).
  void HandleAsync(const HttpRequest& request, HttpReply reply) const;

 private:
  std::vector<HttpRoute> routes_;
  std::string known_paths_;  // for the 404 hint
};

// What the server may echo of a request (a path, a parameter) in an error
// body: TerminalSafe (control bytes and escape sequences shown as \xNN), at
// most about `max` bytes, so curl in a terminal prints only text.
std::string Printable(std::string_view text, size_t max = 200);

// True when an Accept-Encoding value admits gzip (q > 0).
bool AcceptsGzip(std::string_view accept_encoding);

// Compresses a successful, not tiny body when the client accepts gzip and
// marks it with Content-Encoding; leaves the response alone otherwise.
void MaybeGzip(const HttpRequest& request, HttpResponse& response);

}  // namespace trainscope
