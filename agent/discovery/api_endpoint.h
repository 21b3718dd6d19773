#pragma once

#include <string>
#include <string_view>

#include "trainscope/status.h"

namespace trainscope {

// Where the Kubernetes API lives: "https://10.96.0.1:443" or, through
// `kubectl proxy` or a test server, "http://127.0.0.1:8001/some/prefix".
struct ApiEndpoint {
  std::string scheme;  // "http" or "https"
  std::string host;    // IPv6 literals without brackets
  int port = 0;
  std::string base_path;  // "" or "/prefix" (no trailing slash)

  // "scheme://host:port", as httplib::Client wants it.
  std::string Origin() const;
};

Status ParseApiUrl(std::string_view url, ApiEndpoint* out);

// Percent-encodes a query value (RFC 3986 unreserved characters pass).
std::string UrlEncode(std::string_view value);

// Which pods a list/watch asks for. Empty fields do not restrict.
struct PodsQuery {
  std::string node_name;       // fieldSelector=spec.nodeName=<node>
  std::string namespace_name;  // /api/v1/namespaces/<ns>/pods
  std::string label_selector;  // labelSelector=<selector>, sent as given
};

// The pods collection the query names, plus extra query parameters already
// encoded ("watch=true&...").
std::string PodsPath(const ApiEndpoint& endpoint, const PodsQuery& query,
                     std::string_view extra_query);
// The same for the node's pods only (node_name "" = the whole cluster).
std::string PodsPath(const ApiEndpoint& endpoint, std::string_view node_name,
                     std::string_view extra_query);

}  // namespace trainscope
