#include "hostile_support.h"

#include <crypt.h>

#include <algorithm>
#include <cstdio>
#include <memory>

#include "raw_http_client.h"
#include "tls_files.h"

namespace trainscope::testing {

using Clock = std::chrono::steady_clock;

ScrapeCheck ScrapeAnswers(int port, const std::string& case_name,
                          std::chrono::milliseconds budget,
                          const std::string& extra_headers) {
  ScrapeCheck check;
  for (int attempt = 0; attempt < 3 && !check.ok; ++attempt) {
    const auto start = Clock::now();
    const std::string raw =
        RawExchange(port,
                    "GET /metrics HTTP/1.1\r\nHost: x\r\n" + extra_headers +
                        "Connection: close\r\n\r\n",
                    std::chrono::seconds(3));
    const double ms =
        std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    check.latencies_ms.push_back(ms);
    if (StatusOf(raw) != 200 ||
        raw.find("trainscope_build_info") == std::string::npos) {
      check.last_error = "answer: '" + raw.substr(0, 120) + "'";
      continue;
    }
    check.ok = ms <= double(budget.count());
    if (!check.ok) check.last_error = "took " + std::to_string(ms) + " ms";
  }
  std::printf("[hostile] %s: scrape after it", case_name.c_str());
  for (double ms : check.latencies_ms) std::printf(" %.1f ms", ms);
  std::printf("%s\n", check.ok ? "" : " (MISSED)");
  return check;
}

std::vector<std::string> WithFlag(std::vector<std::string> args,
                                  const std::string& flag,
                                  const std::string& value) {
  auto it = std::find(args.begin(), args.end(), flag);
  if (it != args.end() && it + 1 != args.end()) {
    *(it + 1) = value;
  } else {
    args.push_back(flag);
    args.push_back(value);
  }
  return args;
}

std::string RawExchange(int port, const std::string& request,
                        std::chrono::milliseconds within) {
  UniqueFd fd = ConnectLoopback(port);
  if (!fd.valid()) return {};
  if (!SendAll(fd.get(), request)) return {};
  return ReadUntilClose(fd.get(), within);
}

int StatusLines(const std::string& raw) {
  int count = 0;
  for (size_t at = 0; (at = raw.find("HTTP/1.", at)) != std::string::npos;
       ++at) {
    // A status line starts the answer or a line (after the previous
    // answer's header or body).
    if (at == 0 || raw[at - 1] == '\n') {
      const size_t space = raw.find(' ', at);
      if (space != std::string::npos && space + 4 <= raw.size() &&
          std::isdigit(static_cast<unsigned char>(raw[space + 1]))) {
        ++count;
      }
    }
  }
  return count;
}

std::string BcryptAtCost(const std::string& password, int cost) {
  char salt[CRYPT_GENSALT_OUTPUT_SIZE];
  if (!crypt_gensalt_rn("$2b$", static_cast<unsigned long>(cost), nullptr, 0,
                        salt, sizeof salt)) {
    return {};
  }
  auto data = std::make_unique<crypt_data>();
  const char* hash = crypt_r(password.c_str(), salt, data.get());
  return hash && hash[0] != '*' ? hash : "";
}

std::string BasicAuthHeader(const std::string& user_password) {
  return "Basic " + Base64(user_password);
}

}  // namespace trainscope::testing
