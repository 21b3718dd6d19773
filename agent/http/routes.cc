#include "http/routes.h"

#include <spdlog/spdlog.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <exception>
#include <optional>

#include "report_page/page.h"
#include "trainscope/ascii_case.h"
#include "trainscope/terminal_text.h"

namespace trainscope {
namespace {

constexpr const char* kMetricsContentType =
    "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kJsonContentType = "application/json";
constexpr const char* kTextContentType = "text/plain";
// Below this, gzip framing costs more than it saves.
constexpr size_t kGzipMinBytes = 1024;

HttpResponse Text(int status, std::string body) {
  return HttpResponse{status, kTextContentType, std::move(body)};
}

HttpResponse Ready(const HttpHandlers& h) {
  std::string why;
  if (h.ready(&why)) return Text(200, "ready\n");
  return Text(503, "not ready: " + why + "\n");
}

HttpResponse Report(const HttpHandlers& h, const HttpRequest& req) {
  std::string format = req.Query("format");
  if (!format.empty() && format != "json" && format != "text") {
    return Text(400, "format must be json or text\n");
  }
  return h.report(format);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t'))
    s.remove_suffix(1);
  return s;
}

// "q=0", "q=0.0", "q=0.000" refuse an encoding; anything else admits it.
bool QualityIsZero(std::string_view params) {
  size_t q = params.find("q=");
  if (q == std::string_view::npos) return false;
  std::string_view value = Trim(params.substr(q + 2));
  double quality = 1;
  auto [end, ec] =
      std::from_chars(value.data(), value.data() + value.size(), quality);
  (void)end;
  return ec == std::errc() && quality <= 0;
}

std::optional<std::string> GzipBytes(std::string_view in) {
  z_stream zs{};
  // 15 window bits + 16: a gzip header and trailer rather than zlib's.
  if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
                   Z_DEFAULT_STRATEGY) != Z_OK) {
    return std::nullopt;
  }
  std::string out(deflateBound(&zs, in.size()), '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = deflate(&zs, Z_FINISH);
  out.resize(zs.total_out);
  deflateEnd(&zs);
  if (rc != Z_STREAM_END) return std::nullopt;
  return out;
}

}  // namespace

HttpResponse PageResponse(const HttpHandlers& h) {
  if (!h.page) return Text(404, "no report page in this server\n");
  HttpResponse r = h.page();
  r.headers.emplace_back("Content-Security-Policy",
                         std::string(page::kContentSecurityPolicyHeader));
  r.headers.emplace_back("X-Content-Type-Options", "nosniff");
  r.headers.emplace_back("Cache-Control", "no-store");
  return r;
}

std::vector<HttpRoute> AgentRoutes(const HttpHandlers& h) {
  return {
      {"/", [h](const HttpRequest&) { return PageResponse(h); }},
      {"/metrics",
       [h](const HttpRequest&) {
         return HttpResponse{200, kMetricsContentType, h.metrics()};
       }},
      {"/healthz", [](const HttpRequest&) { return Text(200, "ok\n"); }},
      {"/readyz", [h](const HttpRequest&) { return Ready(h); }},
      {"/api/v1/pods",
       [h](const HttpRequest&) {
         return HttpResponse{200, kJsonContentType, h.pods_json()};
       }},
      {"/api/v1/report",
       [h](const HttpRequest& req) { return Report(h, req); }},
      {"/api/v1/profile", nullptr,
       [h](const HttpRequest& req, HttpReply reply) {
         if (!h.profile) {
           reply(Text(404, "no profiler in this server\n"));
           return;
         }
         h.profile(req, std::move(reply));
       }},
      {"/api/v1/profile/top",
       [h](const HttpRequest& req) {
         if (!h.profile_top) return Text(404, "no profiler in this server\n");
         return h.profile_top(req);
       }},
  };
}

HttpRouter::HttpRouter(std::vector<HttpRoute> routes)
    : routes_(std::move(routes)) {
  for (const HttpRoute& r : routes_) {
    known_paths_ += (known_paths_.empty() ? "" : ", ") + r.path;
  }
}

HttpResponse HttpRouter::Handle(const HttpRequest& req) const {
  auto route =
      std::find_if(routes_.begin(), routes_.end(),
                   [&](const HttpRoute& r) { return r.path == req.path; });
  if (route == routes_.end()) {
    return Text(404, "not found: " + Printable(req.path) + "\n(try " +
                         known_paths_ + ")\n");
  }
  if (req.method != "GET" && req.method != "HEAD") {
    HttpResponse res =
        Text(405, "method " + Printable(req.method) + " not allowed\n");
    res.headers.emplace_back("Allow", "GET, HEAD");
    return res;
  }
  if (!route->get) {
    return Text(500, "internal error: " + Printable(req.path) +
                         " answers asynchronously\n");
  }
  try {
    return route->get(req);
  } catch (const std::exception& e) {
    spdlog::error("[http] {} failed: {}", req.path, e.what());
    return Text(500, std::string("internal error: ") + e.what() + "\n");
  } catch (...) {
    spdlog::error("[http] {} failed: unknown exception", req.path);
    return Text(500, "internal error\n");
  }
}

bool HttpRouter::IsAsync(const std::string& path) const {
  auto route = std::find_if(routes_.begin(), routes_.end(),
                            [&](const HttpRoute& r) { return r.path == path; });
  return route != routes_.end() && route->get_async != nullptr;
}

void HttpRouter::HandleAsync(const HttpRequest& req, HttpReply reply) const {
  auto route =
      std::find_if(routes_.begin(), routes_.end(),
                   [&](const HttpRoute& r) { return r.path == req.path; });
  if (route == routes_.end() || !route->get_async ||
      (req.method != "GET" && req.method != "HEAD")) {
    reply(Handle(req));
    return;
  }
  // `reply` may have run before the handler threw; answering twice is the
  // caller's to ignore (the server does).
  try {
    route->get_async(req, reply);
  } catch (const std::exception& e) {
    spdlog::error("[http] {} failed: {}", req.path, e.what());
    reply(Text(500, std::string("internal error: ") + e.what() + "\n"));
  } catch (...) {
    spdlog::error("[http] {} failed: unknown exception", req.path);
    reply(Text(500, "internal error\n"));
  }
}

std::string Printable(std::string_view text, size_t max) {
  return TerminalSafe(text, max);
}

bool AcceptsGzip(std::string_view accept_encoding) {
  while (!accept_encoding.empty()) {
    size_t comma = accept_encoding.find(',');
    std::string_view item = accept_encoding.substr(0, comma);
    accept_encoding = comma == std::string_view::npos
                          ? std::string_view()
                          : accept_encoding.substr(comma + 1);
    size_t semi = item.find(';');
    std::string_view coding = Trim(item.substr(0, semi));
    std::string_view params = semi == std::string_view::npos
                                  ? std::string_view()
                                  : item.substr(semi + 1);
    if ((EqualsIgnoreAsciiCase(coding, "gzip") || coding == "*") &&
        !QualityIsZero(params)) {
      return true;
    }
  }
  return false;
}

void MaybeGzip(const HttpRequest& req, HttpResponse& res) {
  // octet-stream bodies (a gzipped pprof profile) are compressed already.
  if (res.status != 200 || res.body.size() < kGzipMinBytes ||
      res.content_type == "application/octet-stream" ||
      !AcceptsGzip(req.accept_encoding)) {
    return;
  }
  std::optional<std::string> zipped = GzipBytes(res.body);
  if (!zipped) return;  // plain is still a correct answer
  res.body = std::move(*zipped);
  res.headers.emplace_back("Content-Encoding", "gzip");
  res.headers.emplace_back("Vary", "Accept-Encoding");
}

}  // namespace trainscope
