#pragma once

#include <CLI/CLI.hpp>

#include "http/connections.h"

namespace trainscope {

// --http-max-connections, --http-max-connections-per-ip, --http-timeout
// (each also from TRAINSCOPE_<NAME>); see docs/reliability.md.
void AddHttpFlags(CLI::App& app, HttpLimits* limits);

}  // namespace trainscope
