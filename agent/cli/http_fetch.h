#pragma once

#include <map>
#include <string>

#include "cli/report_http.h"
#include "trainscope/status.h"

namespace trainscope::cli {

// A server's answer, whatever its status.
struct HttpAnswer {
  int status = 0;
  std::string body;  // decoded (gzip, br), at most limits.max_response_bytes
};

// GET target.base_path + path: the one place the CLI talks HTTP, so every
// command (report --agent, report --prometheus, profile) gets the same
// limits. The whole request (connect, headers, body) must end within
// target.limits.timeout_seconds and the body must fit
// target.limits.max_response_bytes; both are checked while the body streams,
// so a dripping or endless server is cut off and its bytes are never all
// held. An error says what went wrong in a sentence (connection refused,
// no route to host, timed out after N s (--timeout), larger than N bytes
// (--max-response-bytes), TLS handshake failed, ...) after the URL.
// The PEM a target carries (ca_pem, client certificate and key) parses,
// and the key is the certificate's; the error says which part is wrong.
Status CheckTlsMaterial(const HttpTarget& target);

Status FetchWithinLimits(const HttpTarget& target, const std::string& path,
                         const std::multimap<std::string, std::string>& params,
                         HttpAnswer* out);

}  // namespace trainscope::cli
