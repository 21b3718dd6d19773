#pragma once

#include <chrono>
#include <string>
#include <vector>

namespace trainscope::testing {

// What every hostile case ends with: the agent is still up and a scrape of
// /metrics answers 200 within `budget`. A scrape that misses the budget is
// tried twice more (a loaded CI core can delay any one request); every
// latency is printed for docs/reliability.md.
struct ScrapeCheck {
  bool ok = false;
  std::vector<double> latencies_ms;
  std::string last_error;
};
ScrapeCheck ScrapeAnswers(
    int port, const std::string& case_name,
    std::chrono::milliseconds budget = std::chrono::milliseconds(100),
    const std::string& extra_headers = "");

// FixtureHostArgs with `flag`'s value replaced (the fixture sets it) or
// appended.
std::vector<std::string> WithFlag(std::vector<std::string> args,
                                  const std::string& flag,
                                  const std::string& value);

// One raw request on a fresh connection; the server's whole answer (until
// it closes or `within` passes).
std::string RawExchange(
    int port, const std::string& request,
    std::chrono::milliseconds within = std::chrono::seconds(3));

// How many HTTP status lines an answer holds (a response must have one).
int StatusLines(const std::string& raw);

// A bcrypt hash at `cost` (10 is htpasswd's default and what slows a
// wrong-password flood; the shared test helper uses 5 for speed).
std::string BcryptAtCost(const std::string& password, int cost);

// "Basic base64(user:password)".
std::string BasicAuthHeader(const std::string& user_password);

}  // namespace trainscope::testing
