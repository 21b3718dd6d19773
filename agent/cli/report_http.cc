#include "cli/report_http.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>

#include "cli/http_fetch.h"
#include "cli/server_text.h"

namespace trainscope::cli {

namespace {

// The URL as an error quotes it: a pasted URL may hold anything.
std::string Quoted(const std::string& url) {
  return "'" + ServerText(url, 200) + "'";
}

bool HostNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' ||
         c == '_';
}

bool Ipv6Char(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) || c == ':' || c == '.';
}

// "host", "host:port", "[v6]" or "[v6]:port" into target->host and ->port.
Status ParseAuthority(const std::string& url, const std::string& authority,
                      int default_port, HttpTarget* target) {
  const auto bad = [&url](const std::string& why) {
    return Status::Error(Quoted(url) + " " + why);
  };
  if (authority.find('@') != std::string::npos) {
    return bad(
        "holds user credentials, which are not sent from a URL: give "
        "--header 'Authorization: Basic ...' or --bearer-token-file");
  }
  std::string host;
  std::string port;
  if (!authority.empty() && authority[0] == '[') {
    const size_t close = authority.find(']');
    if (close == std::string::npos)
      return bad("has an unclosed '[' in its host");
    host = authority.substr(1, close - 1);
    const std::string after = authority.substr(close + 1);
    if (!after.empty() && after[0] != ':') {
      return bad("has junk after its [IPv6] host");
    }
    if (host.empty() || !std::all_of(host.begin(), host.end(), Ipv6Char)) {
      return bad("has a bad IPv6 host '[" + host + "]'");
    }
    if (!after.empty()) port = after.substr(1);
    if (!after.empty() && port.empty()) return bad("has a bad port ''");
  } else {
    const size_t colon = authority.find(':');
    host = authority.substr(0, colon);
    if (colon != std::string::npos) {
      port = authority.substr(colon + 1);
      if (port.empty()) return bad("has a bad port ''");
    }
    if (host.empty()) return bad("has no host");
    if (!std::all_of(host.begin(), host.end(), HostNameChar)) {
      return bad("has a bad host '" + host + "'");
    }
  }
  target->host = host;
  target->port = default_port;
  if (!port.empty()) {
    const bool digits =
        port.size() <= 5 && std::all_of(port.begin(), port.end(), [](char c) {
          return std::isdigit(static_cast<unsigned char>(c)) != 0;
        });
    const int number = digits ? std::stoi(port) : 0;
    if (number < 1 || number > 65535) {
      return bad("has a bad port '" + port + "'");
    }
    target->port = number;
  }
  return Status::Ok();
}

}  // namespace

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
    return Status::Error(Quoted(url) + " is not an http:// or https:// URL");
  }
  for (char c : url) {
    const auto u = static_cast<unsigned char>(c);
    if (u <= 0x20 || u == 0x7F) {
      return Status::Error(Quoted(url) +
                           " holds a space or a control character");
    }
  }
  if (rest.find_first_of("?#") != std::string::npos) {
    return Status::Error(Quoted(url) +
                         " has a query or a fragment: give the server's "
                         "base URL");
  }
  const size_t slash = rest.find('/');
  const std::string authority = rest.substr(0, slash);
  std::string path = slash == std::string::npos ? "" : rest.substr(slash);
  while (!path.empty() && path.back() == '/') path.pop_back();
  if (authority.empty()) return Status::Error(Quoted(url) + " has no host");
  if (Status s =
          ParseAuthority(url, authority, scheme == "https" ? 443 : 80, target);
      !s.ok()) {
    return s;
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

Status AgentUrlTarget(const std::string& url, const HttpClientFlags& client,
                      const HttpLimits& limits, HttpTarget* out) {
  if (Status s = ParseHttpUrl(url, out); !s.ok())
    return Status::Error("--agent: " + s.message());
  if (Status s = ApplyHttpClientFlags(client, out); !s.ok()) return s;
  out->limits = limits;
  return Status::Ok();
}

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
  HttpAnswer answer;
  if (Status s = FetchWithinLimits(target, path, params, &answer); !s.ok()) {
    return s;
  }
  nlohmann::json body = nlohmann::json::parse(answer.body, nullptr, false);
  if (answer.status != 200) {
    std::string detail = ServerText(answer.body);
    if (!body.is_discarded() && body.is_object() && body.contains("error")) {
      detail = ServerText(body["error"].is_string()
                              ? body["error"].get<std::string>()
                              : body["error"].dump());
    }
    if (detail.empty()) detail = "(no body)";
    return Status::Error(url + " answered HTTP " +
                         std::to_string(answer.status) + ": " + detail);
  }
  if (body.is_discarded()) {
    return Status::Error(url + " did not answer JSON (body starts with '" +
                         ServerText(answer.body, 60) + "')");
  }
  *out = std::move(body);
  return Status::Ok();
}

Status QueryPrometheus(const HttpTarget& target, const std::string& url,
                       const std::string& path,
                       const std::multimap<std::string, std::string>& params,
                       const std::string& result_type, nlohmann::json* result) {
  nlohmann::json answer;
  if (Status s = GetJson(target, path, params, &answer); !s.ok()) {
    return s;
  }
  // find() and == never throw, whatever shape a proxy or a broken server
  // answered with (value() throws on a non-object or a non-string).
  const auto status = answer.find("status");
  const auto data = answer.find("data");
  const bool typed = data != answer.end() && data->is_object() &&
                     data->find("resultType") != data->end() &&
                     (*data)["resultType"] == result_type;
  if (status == answer.end() || *status != "success" || !typed) {
    return Status::Error(url + " gave no " + result_type + " for " +
                         params.find("query")->second + ": " +
                         ServerText(answer.dump(), 200));
  }
  auto found = data->find("result");
  *result = found != data->end() ? std::move(*found) : nlohmann::json::array();
  return Status::Ok();
}

}  // namespace trainscope::cli
