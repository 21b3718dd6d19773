#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "trainscope/status.h"

namespace trainscope::cli {

// What the CLI accepts from one server (--timeout, --max-response-bytes):
// a server that drips, stalls or sends without end is cut off.
struct HttpLimits {
  double timeout_seconds = 60;  // connect + headers + the whole body
  uint64_t max_response_bytes = uint64_t{256} << 20;  // the body, decoded
};

// "http[s]://host[:port][/base]" split for httplib.
struct HttpTarget {
  std::string origin;     // scheme://host[:port]
  std::string base_path;  // "" or "/prefix" (no trailing slash)
  std::string host;       // as in the URL ("[::1]" keeps its brackets)
  int port = 0;           // the URL's, else the scheme's
  HttpLimits limits;
  // Sent with every request (--header, --bearer-token-file).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string ca_file;  // verifies an https server ("" = the system's CAs)
  std::string ca_pem;   // or these CA certificates (a kubeconfig's data)
  // A client certificate and its key, PEM (a kubeconfig's user).
  std::string client_cert_pem;
  std::string client_key_pem;
};

// What the user gives for an authenticated or multi-tenant server.
struct HttpClientFlags {
  std::string bearer_token_file;
  std::string ca_file;
  std::vector<std::string> headers;  // "Name: value"
};

// Reads the token file, checks the CA file and parses the headers into
// `target`; errors name the flag.
Status ApplyHttpClientFlags(const HttpClientFlags& flags, HttpTarget* target);

// --agent URL with the client flags and limits, as `report` and `profile`
// take them; every error is a usage error and names its flag.
Status AgentUrlTarget(const std::string& url, const HttpClientFlags& client,
                      const HttpLimits& limits, HttpTarget* out);

// Parses a user-given URL; the error names what is wrong with it. Whatever
// httplib could not connect to as given (user info, a query, spaces, a
// malformed host) is refused here, so an unusable URL is a usage error.
Status ParseHttpUrl(const std::string& url, HttpTarget* target);

// GET base_path + path with query parameters within target.limits
// (http_fetch.h) and parses the JSON body. Errors carry the URL and the
// reason (unreachable, too slow, too large, HTTP status with the body's
// start, bad JSON); the server's text in them is sanitised (server_text.h).
Status GetJson(const HttpTarget& target, const std::string& path,
               const std::multimap<std::string, std::string>& params,
               nlohmann::json* out);

// GET a Prometheus API path (/api/v1/query, /api/v1/query_range) and check
// it answered `result_type` data ("vector", "matrix"); `result` is
// data.result. The error names `url`, the query and the answer's start.
Status QueryPrometheus(const HttpTarget& target, const std::string& url,
                       const std::string& path,
                       const std::multimap<std::string, std::string>& params,
                       const std::string& result_type, nlohmann::json* result);

}  // namespace trainscope::cli
