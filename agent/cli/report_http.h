#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "trainscope/status.h"

namespace trainscope::cli {

// "http[s]://host[:port][/base]" split for httplib.
struct HttpTarget {
  std::string origin;     // scheme://host:port
  std::string base_path;  // "" or "/prefix" (no trailing slash)
  // Sent with every request (--header, --bearer-token-file).
  std::vector<std::pair<std::string, std::string>> headers;
  std::string ca_file;  // verifies an https server ("" = the system's CAs)
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

// Parses a user-given URL; the error names what is wrong with it.
Status ParseHttpUrl(const std::string& url, HttpTarget* target);

// GET base_path + path with query parameters and parses the JSON body.
// Errors carry the URL and the reason (unreachable, HTTP status with the
// body's start, bad JSON).
Status GetJson(const HttpTarget& target, const std::string& path,
               const std::multimap<std::string, std::string>& params,
               nlohmann::json* out);

}  // namespace trainscope::cli
