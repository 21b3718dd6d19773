#include "cli/report_http.h"

#include <httplib.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

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

namespace {

bool HeaderNameChar(char c) {
  // RFC 9110 token characters.
  return std::isalnum(static_cast<unsigned char>(c)) ||
         std::string_view("!#$%&'*+-.^_`|~").find(c) != std::string_view::npos;
}

std::string Trimmed(std::string s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) {
    s.pop_back();
  }
  size_t start = 0;
  while (start < s.size() &&
         std::isspace(static_cast<unsigned char>(s[start]))) {
    ++start;
  }
  return s.substr(start);
}

}  // namespace

Status ApplyHttpClientFlags(const HttpClientFlags& flags, HttpTarget* target) {
  for (const auto& header : flags.headers) {
    const size_t colon = header.find(':');
    const std::string name =
        colon == std::string::npos ? "" : Trimmed(header.substr(0, colon));
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(), HeaderNameChar)) {
      return Status::Error("--header '" + header +
                           "': expected 'Name: value' (e.g. 'X-Scope-OrgID: "
                           "tenant-a')");
    }
    const std::string value = Trimmed(header.substr(colon + 1));
    if (value.find_first_of("\r\n") != std::string::npos) {
      return Status::Error("--header '" + name +
                           "': the value holds a line break");
    }
    target->headers.emplace_back(name, value);
  }
  if (!flags.bearer_token_file.empty()) {
    std::ifstream in(flags.bearer_token_file, std::ios::binary);
    std::ostringstream text;
    if (in) text << in.rdbuf();
    const std::string token = Trimmed(text.str());
    if (!in) {
      return Status::Error("--bearer-token-file " + flags.bearer_token_file +
                           ": cannot read");
    }
    if (token.empty() || token.find_first_of("\r\n") != std::string::npos) {
      return Status::Error("--bearer-token-file " + flags.bearer_token_file +
                           ": expected one token (the file is empty or has "
                           "several lines)");
    }
    target->headers.emplace_back("Authorization", "Bearer " + token);
  }
  if (!flags.ca_file.empty()) {
    std::ifstream in(flags.ca_file);
    if (!in) {
      return Status::Error("--ca-file " + flags.ca_file + ": cannot read");
    }
    if (target->origin.rfind("https://", 0) != 0) {
      return Status::Error("--ca-file needs an https:// URL, not " +
                           target->origin);
    }
    target->ca_file = flags.ca_file;
  }
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
  if (!target.ca_file.empty()) client.set_ca_cert_path(target.ca_file);
  httplib::Params query(params.begin(), params.end());
  httplib::Headers headers(target.headers.begin(), target.headers.end());
  auto res = client.Get(target.base_path + path, query, headers);
  if (!res) {
    std::string why = httplib::to_string(res.error());
    if (res.error() == httplib::Error::SSLServerVerification) {
      why +=
          " (the server's certificate is not signed by " +
          (target.ca_file.empty() ? std::string("a system CA; give --ca-file")
                                  : target.ca_file) +
          ")";
    }
    return Status::Error("cannot reach " + url + ": " + why);
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
