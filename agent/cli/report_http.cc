#include "cli/report_http.h"

#include <httplib.h>

#include <cctype>

namespace trainscope::cli {

Status ParseHttpUrl(const std::string& url, HttpTarget* target) {
  std::string rest;
  std::string scheme;
  if (url.rfind("http://", 0) == 0) {
    scheme = "http";
    rest = url.substr(7);
  } else if (url.rfind("https://", 0) == 0) {
    scheme = "https";
    rest = url.substr(8);
  } else {
    return Status::Error("'" + url + "' is not an http:// or https:// URL");
  }
  const size_t slash = rest.find('/');
  std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (authority.empty()) return Status::Error("'" + url + "' has no host");
  // The port is what follows the last ':' unless that is inside [v6].
  const size_t colon = authority.rfind(':');
  const size_t bracket = authority.rfind(']');
  if (colon != std::string::npos &&
      (bracket == std::string::npos || colon > bracket)) {
    const std::string port = authority.substr(colon + 1);
    if (port.empty() || port.size() > 5) {
      return Status::Error("'" + url + "' has a bad port");
    }
    for (char c : port) {
      if (!std::isdigit(static_cast<unsigned char>(c))) {
        return Status::Error("'" + url + "' has a bad port '" + port + "'");
      }
    }
    if (std::stoi(port) == 0 || std::stoi(port) > 65535) {
      return Status::Error("'" + url + "' has a bad port '" + port + "'");
    }
    if (colon == 0) return Status::Error("'" + url + "' has no host");
  }
  target->origin = scheme + "://" + authority;
  target->base_path = path;
  return Status::Ok();
}

Status GetJson(const HttpTarget& target, const std::string& path,
               const std::multimap<std::string, std::string>& params,
               nlohmann::json* out) {
  const std::string url = target.origin + target.base_path + path;
  httplib::Client client(target.origin);
  if (!client.is_valid()) {
    return Status::Error(url + ": cannot create an HTTP client");
  }
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(60, 0);
  httplib::Params query(params.begin(), params.end());
  auto res = client.Get(target.base_path + path, query, httplib::Headers{});
  if (!res) {
    return Status::Error("cannot reach " + url + ": " +
                         httplib::to_string(res.error()));
  }
  nlohmann::json body = nlohmann::json::parse(res->body, nullptr, false);
  if (res->status != 200) {
    std::string detail = res->body.substr(0, 300);
    if (!body.is_discarded() && body.contains("error")) {
      detail = body["error"].is_string() ? body["error"].get<std::string>()
                                         : body["error"].dump();
    }
    return Status::Error(url + " answered HTTP " + std::to_string(res->status) +
                         ": " + detail);
  }
  if (body.is_discarded()) {
    return Status::Error(url + " did not answer JSON (body starts with '" +
                         res->body.substr(0, 60) + "')");
  }
  *out = std::move(body);
  return Status::Ok();
}

}  // namespace trainscope::cli
