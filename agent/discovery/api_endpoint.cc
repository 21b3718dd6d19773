#include "discovery/api_endpoint.h"

#include <cctype>
#include <charconv>

namespace trainscope {

std::string ApiEndpoint::Origin() const {
  const bool v6 = host.find(':') != std::string::npos;
  return scheme + "://" + (v6 ? "[" + host + "]" : host) + ":" +
         std::to_string(port);
}

Status ParseApiUrl(std::string_view url, ApiEndpoint* out) {
  auto bad = [&](const std::string& why) {
    return Status::Error("kube API URL \"" + std::string(url) + "\": " + why);
  };
  ApiEndpoint e;
  const auto sep = url.find("://");
  if (sep == std::string_view::npos) return bad("missing http:// or https://");
  e.scheme = std::string(url.substr(0, sep));
  if (e.scheme != "http" && e.scheme != "https") {
    return bad("scheme must be http or https");
  }
  std::string_view rest = url.substr(sep + 3);
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash);
    if (path.find_first_of("?#") != std::string_view::npos) {
      return bad("query or fragment not allowed");
    }
    while (!path.empty() && path.back() == '/') path.remove_suffix(1);
    e.base_path = std::string(path);
  }
  if (authority.find('@') != std::string_view::npos) {
    return bad("credentials in the URL are not supported; use a token file");
  }
  std::string_view port_text;
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return bad("unclosed IPv6 bracket");
    e.host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return bad("junk after IPv6 address");
      port_text = after.substr(1);
    }
  } else {
    const auto colon = authority.rfind(':');
    e.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos)
      port_text = authority.substr(colon + 1);
  }
  if (e.host.empty()) return bad("missing host");
  if (port_text.empty()) {
    e.port = e.scheme == "https" ? 443 : 80;
  } else {
    int port = 0;
    auto [ptr, ec] = std::from_chars(port_text.data(),
                                     port_text.data() + port_text.size(), port);
    if (ec != std::errc() || ptr != port_text.data() + port_text.size() ||
        port <= 0 || port > 65535) {
      return bad("bad port \"" + std::string(port_text) + "\"");
    }
    e.port = port;
  }
  *out = std::move(e);
  return Status::Ok();
}

std::string UrlEncode(std::string_view value) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : value) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out.push_back('%');
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 15]);
    }
  }
  return out;
}

std::string PodsPath(const ApiEndpoint& endpoint, const PodsQuery& q,
                     std::string_view extra_query) {
  std::string path = endpoint.base_path;
  path += q.namespace_name.empty()
              ? "/api/v1/pods"
              : "/api/v1/namespaces/" + UrlEncode(q.namespace_name) + "/pods";
  std::string query;
  auto add = [&query](std::string_view param) {
    if (!query.empty()) query += "&";
    query += param;
  };
  if (!q.node_name.empty()) {
    add("fieldSelector=" + UrlEncode("spec.nodeName=" + q.node_name));
  }
  if (!q.label_selector.empty()) {
    add("labelSelector=" + UrlEncode(q.label_selector));
  }
  if (!extra_query.empty()) add(extra_query);
  if (!query.empty()) path += "?" + query;
  return path;
}

std::string PodsPath(const ApiEndpoint& endpoint, std::string_view node_name,
                     std::string_view extra_query) {
  return PodsPath(endpoint, PodsQuery{.node_name = std::string(node_name)},
                  extra_query);
}

}  // namespace trainscope
