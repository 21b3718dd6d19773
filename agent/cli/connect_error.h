#pragma once

#include <string>

namespace trainscope::cli {

// Why connecting to host:port failed, as a sentence ("connection refused",
// "no route to host", "cannot resolve host 'x' (Name or service not
// known)"). httplib says only "Connection" and keeps no errno when a
// non-blocking connect fails later (the usual case off loopback): this
// resolves the host again and, unless `saved_errno` (errno right after the
// failed request) already names a connect error, tries one connect of at
// most `max_wait_seconds` to learn it. Only called after a failure.
std::string ConnectFailureReason(const std::string& host, int port,
                                 int saved_errno, double max_wait_seconds);

}  // namespace trainscope::cli
