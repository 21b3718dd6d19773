#pragma once

#include <CLI/CLI.hpp>
#include <cstdint>
#include <string>

#include "cli/report_http.h"
#include "trainscope/flag_checks.h"

namespace trainscope::cli {

// Bounds of the HTTP limits (docs/reliability.md, "CLI limits").
inline constexpr double kMaxTimeoutSeconds = 86400;
inline constexpr uint64_t kMaxResponseBytesCap = uint64_t{1} << 40;

// Adds --timeout and --max-response-bytes, read into `limits`; the help
// shows `timeout_default` (a number, or how the default is derived).
// Returns the --timeout option, so a command can tell whether it was given.
CLI::Option* AddHttpLimitFlags(CLI::App& app, HttpLimits* limits,
                               const std::string& timeout_default);

}  // namespace trainscope::cli
