#include "cli/cli_flags.h"

namespace trainscope::cli {

CLI::Option* AddHttpLimitFlags(CLI::App& app, HttpLimits* limits,
                               const std::string& timeout_default) {
  auto* timeout =
      app.add_option("--timeout", limits->timeout_seconds,
                     "Seconds one request may take in all: connecting, the "
                     "answer's headers and its whole body (a server that "
                     "stalls or drips is cut off)")
          ->check(NumberIn(0, kMaxTimeoutSeconds))
          ->default_str(timeout_default);
  app.add_option("--max-response-bytes", limits->max_response_bytes,
                 "Largest answer body read from a server, in bytes; a larger "
                 "one is refused while it streams (memory stays bounded)")
      ->check(WholeNumberIn(1, kMaxResponseBytesCap))
      ->capture_default_str();
  return timeout;
}

}  // namespace trainscope::cli
