#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "trainscope/unique_fd.h"

namespace trainscope::testing {

// Plain-socket HTTP clients that behave badly on purpose (idle, slow,
// oversized), for the HTTP starvation tests and the bench.

// A blocking TCP connection to 127.0.0.1:port from `source` (any
// 127.0.0.0/8 address: loopback, distinct per-address counts). Invalid on
// failure.
UniqueFd ConnectLoopback(int port, const char* source = "127.0.0.1");

bool SendAll(int fd, const std::string& bytes);

// True when the peer ends the connection (EOF or reset) within `within`;
// data it sends meanwhile is discarded.
bool ClosedWithin(int fd, std::chrono::milliseconds within);

// Everything the server sends until it closes or `within` passes.
std::string ReadUntilClose(int fd, std::chrono::milliseconds within);

// The status code in a raw response ("HTTP/1.1 414 ..."), 0 if none.
int StatusOf(const std::string& raw_response);

// GET with Connection: close on a fresh connection; the raw response, or
// nothing when the connection failed or timed out.
std::optional<std::string> RawGet(
    int port, const std::string& path,
    std::chrono::milliseconds within = std::chrono::seconds(5),
    const char* source = "127.0.0.1");

// Raises this process's open-file soft limit to `wanted` (up to the hard
// limit); returns the limit now in force.
long RaiseFileLimit(long wanted);

}  // namespace trainscope::testing
