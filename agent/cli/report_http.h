#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "trainscope/status.h"

namespace trainscope::cli {

// "http[s]://host[:port][/base]" split for httplib.
struct HttpTarget {
  std::string origin;     // scheme://host:port
  std::string base_path;  // "" or "/prefix" (no trailing slash)
};

// Parses a user-given URL; the error names what is wrong with it.
Status ParseHttpUrl(const std::string& url, HttpTarget* target);

// GET base_path + path with query parameters and parses the JSON body.
// Errors carry the URL and the reason (unreachable, HTTP status with the
// body's start, bad JSON).
Status GetJson(const HttpTarget& target, const std::string& path,
               const std::multimap<std::string, std::string>& params,
               nlohmann::json* out);

}  // namespace trainscope::cli
