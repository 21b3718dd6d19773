// The hostile-input suite (issue 35), HTTP side: the real agent on the
// v2-systemd fixture host under malformed requests, header and query
// floods, slow clients, wrong-password floods and profile parameter abuse.
// Every case ends the same way: the agent is still up and a scrape answers
// within 100 ms (ScrapeAnswers; the latencies are printed for
// docs/reliability.md, "Hostile inputs").
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <thread>

#include "agent_process.h"
#include "hostile_support.h"
#include "raw_http_client.h"
#include "tls_files.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

class HostileHttpTest : public ::testing::Test {
 protected:
  void Start(std::vector<std::string> extra = {}) {
    port_ = FreePort();
    // Flags and values in pairs; one the fixture sets is replaced.
    auto args = FixtureHostArgs("127.0.0.1:" + std::to_string(port_));
    for (size_t i = 0; i + 1 < extra.size(); i += 2) {
      args = WithFlag(std::move(args), extra[i], extra[i + 1]);
    }
    agent_ = std::make_unique<AgentProcess>(args);
    ASSERT_TRUE(agent_->WaitHttpOk(port_, "/readyz", 10s)) << agent_->Stderr();
  }
  void ExpectServes(const std::string& case_name,
                    const std::string& headers = "") {
    ASSERT_FALSE(agent_->WaitExit(0ms).has_value())
        << case_name << ": the agent exited\n"
        << agent_->Stderr();
    const ScrapeCheck check = ScrapeAnswers(port_, case_name, 100ms, headers);
    EXPECT_TRUE(check.ok) << case_name << ": " << check.last_error;
  }

  int port_ = 0;
  std::unique_ptr<AgentProcess> agent_;
};

struct RawCase {
  const char* name;
  std::string request;
  // The status the agent answers, or 0: it may close without an answer.
  int status;
  // Status lines allowed in the answer. libmicrohttpd 0.9.75 (Debian 12)
  // builds the header of its own answer to a malformed Content-Length
  // twice; the connection is closed after it (docs/reliability.md,
  // "Hostile inputs", what is left).
  int max_status_lines = 1;
};

// Each request gets at most one status line (never two answers to one
// request), the expected status where there is one, and the next scrape is
// served.
TEST_F(HostileHttpTest, MalformedRequestsGetOneAnswerAndTheAgentServes) {
  Start();
  const std::string many_params = [] {
    std::string q;
    for (int i = 0; i < 250; ++i)
      q += (i ? "&" : "?") + ("k" + std::to_string(i)) + "=v";
    return q;
  }();
  const std::string many_headers = [] {
    std::string h;
    for (int i = 0; i < 400; ++i) h += "X-H" + std::to_string(i) + ": v\r\n";
    return h;
  }();
  const std::vector<RawCase> cases = {
      {"garbage", "\x16\x03\x01\x02\x00garbage\r\n\r\n", 0},
      {"no_version", "GET /metrics\r\n\r\n", 400},
      {"http_9", "GET /metrics HTTP/9.9\r\nHost: x\r\n\r\n", 505},
      {"header_without_colon", "GET /metrics HTTP/1.1\r\nHost x\r\n\r\n", 400},
      {"nul_in_target",
       std::string("GET /met\0rics HTTP/1.1\r\nConnection: close\r\n\r\n", 45),
       0},
      {"absolute_form",
       "GET http://127.0.0.1/metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n"
       "Connection: close\r\n\r\n",
       200},
      {"absolute_form_probe",
       "GET HTTP://agent:9476/healthz HTTP/1.1\r\nHost: agent\r\n"
       "Connection: close\r\n\r\n",
       200},
      {"huge_content_length",
       "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: "
       "99999999999999999999999\r\n\r\n",
       413, 2},
      {"negative_content_length",
       "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n", 400,
       2},
      {"two_content_lengths",
       "GET /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
       "Content-Length: 2\r\nConnection: close\r\n\r\nab",
       0},
      {"bad_chunk",
       "POST /metrics HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
       "zz\r\n",
       405},
      {"smuggling_cl_te",
       "POST /metrics HTTP/1.1\r\nHost: x\r\nContent-Length: 4\r\n"
       "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
       405},
      // 250 parameters once got no answer at all (libmicrohttpd ran out of
      // connection memory parsing them): now 414 at once, counted.
      {"query_250_params",
       "GET /api/v1/pods" + many_params +
           " HTTP/1.1\r\nHost: x\r\n"
           "Connection: close\r\n\r\n",
       414},
      {"query_5000_params",
       "GET /api/v1/pods?" + std::string(9999, '&') +
           " HTTP/1.1\r\n"
           "Host: x\r\nConnection: close\r\n\r\n",
       414},
      {"escape_in_path",
       "GET /%1b%5b31mred HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
       404},
      {"query_20k",
       "GET /api/v1/pods?q=" + std::string(20000, 'a') +
           " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
       414},
      {"header_flood",
       "GET /metrics HTTP/1.1\r\nHost: x\r\n" + many_headers + "\r\n", 431},
      {"lf_only", "GET /healthz HTTP/1.1\nHost: x\nConnection: close\n\n", 200},
      {"options_star", "OPTIONS * HTTP/1.1\r\nHost: x\r\n\r\n", 0},
  };
  for (const RawCase& c : cases) {
    const std::string answer = RawExchange(port_, c.request, 3s);
    EXPECT_LE(StatusLines(answer), c.max_status_lines)
        << c.name << " got more status lines than allowed:\n"
        << answer.substr(0, 400);
    EXPECT_EQ(answer.find('\x1b'), std::string::npos)
        << c.name << ": an escape sequence echoed back";
    if (c.status != 0) {
      EXPECT_EQ(StatusOf(answer), c.status)
          << c.name << ": " << answer.substr(0, 200);
    }
    ExpectServes(c.name);
  }
  const auto metrics = HttpGet(port_, "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_NE(metrics->find("trainscope_http_connections_closed_total{reason="
                          "\"query_parameters\"} 2"),
            std::string::npos)
      << "the query floods are counted";
}

// Pipelined requests on one connection: every one answered, in order.
TEST_F(HostileHttpTest, PipelinedRequestsAreAnsweredInOrder) {
  Start();
  std::string requests;
  for (int i = 0; i < 20; ++i) {
    requests += "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n";
  }
  requests += "GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  const std::string answer = RawExchange(port_, requests, 5s);
  EXPECT_EQ(StatusLines(answer), 21) << answer.substr(0, 300);
  ExpectServes("pipelined");
}

// Slow clients: 30 connections dripping a header a byte at a time are cut
// after --http-timeout while scrapes go on.
TEST_F(HostileHttpTest, SlowClientsAreCutAndScrapesGoOn) {
  Start({"--http-timeout", "1"});
  std::atomic<bool> stop{false};
  std::vector<std::thread> dripping;
  std::atomic<int> cut{0};
  for (int i = 0; i < 30; ++i) {
    dripping.emplace_back([&] {
      UniqueFd fd = ConnectLoopback(port_);
      const std::string header = "GET /metrics HTTP/1.1\r\nX-Slow: ";
      for (size_t b = 0; !stop && b < 400; ++b) {
        if (!SendAll(fd.get(), std::string(1, header[b % header.size()]))) {
          ++cut;
          return;
        }
        std::this_thread::sleep_for(100ms);
      }
    });
  }
  std::this_thread::sleep_for(300ms);
  ExpectServes("slow_clients_dripping");
  std::this_thread::sleep_for(2500ms);
  stop = true;
  for (auto& t : dripping) t.join();
  EXPECT_EQ(cut.load(), 30) << "every dripping client is cut by the timeout";
  ExpectServes("slow_clients_after");
}

// 8 connections send wrong passwords as fast as they can for 3 s (bcrypt
// at htpasswd's cost 10); scrapes with the right credentials keep their
// latency, and the flood is answered 429 once its address's ration of
// bcrypt checks is spent.
TEST_F(HostileHttpTest, AWrongPasswordFloodDoesNotSlowScrapes) {
  const fs::path dir = fs::temp_directory_path() / ("trainscope-hostile-auth-" +
                                                    std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string hash = BcryptAtCost("s3cret", 10);
  ASSERT_FALSE(hash.empty());
  ASSERT_TRUE(WriteFile((dir / "web.yml").string(),
                        "basic_auth_users:\n  prometheus: " + hash + "\n"));
  Start({"--web-config-file", (dir / "web.yml").string()});
  const std::string good =
      "Authorization: " + BasicAuthHeader("prometheus:s3cret") + "\r\n";
  ExpectServes("auth_first_scrape_pays_bcrypt", good);

  std::atomic<bool> stop{false};
  std::atomic<int> answered_401{0}, answered_429{0};
  std::vector<std::thread> flood;
  for (int t = 0; t < 8; ++t) {
    flood.emplace_back([&, t] {
      for (int i = 0; !stop; ++i) {
        const std::string bad =
            "Authorization: " +
            BasicAuthHeader("prometheus:guess-" + std::to_string(t) + "-" +
                            std::to_string(i)) +
            "\r\n";
        const int status =
            StatusOf(RawExchange(port_,
                                 "GET /metrics HTTP/1.1\r\nHost: x\r\n" + bad +
                                     "Connection: close\r\n\r\n",
                                 2s));
        if (status == 401) ++answered_401;
        if (status == 429) ++answered_429;
      }
    });
  }
  std::vector<double> during;
  for (int i = 0; i < 15; ++i) {
    std::this_thread::sleep_for(200ms);
    const ScrapeCheck check =
        ScrapeAnswers(port_, "auth_flood_during", 100ms, good);
    during.push_back(check.latencies_ms.front());
  }
  stop = true;
  for (auto& t : flood) t.join();
  std::sort(during.begin(), during.end());
  std::printf(
      "[hostile] auth flood: %d answered 401, %d answered 429; "
      "scrape median %.1f ms, max %.1f ms\n",
      answered_401.load(), answered_429.load(), during[during.size() / 2],
      during.back());
  EXPECT_LT(during[during.size() / 2], 100) << "median scrape during the flood";
  EXPECT_GT(answered_429.load(), 0) << "the flood was throttled";
  EXPECT_LE(answered_401.load(), 5 + 6) << "bcrypt checks: a burst of 5 and "
                                           "one a second for 3 s";
  ExpectServes("auth_flood_after", good);
  std::error_code ec;
  fs::remove_all(dir, ec);
}

// Profile parameters out of range or absurd are answered 400 (or 404 for a
// pod this node does not run) at once, without starting a profile.
TEST_F(HostileHttpTest, ProfileParameterAbuseIsRefusedAtOnce) {
  Start({"--profiler", "on", "--profile-continuous", "off"});
  const std::vector<std::pair<std::string, int>> cases = {
      {"namespace=a&pod=b&seconds=1e308", 400},
      {"namespace=a&pod=b&seconds=nan", 400},
      {"namespace=a&pod=b&seconds=-1", 400},
      {"namespace=a&pod=b&seconds=0x10", 400},
      {"namespace=a&pod=b&hz=1000000000", 400},
      {"namespace=a&pod=b&hz=-1", 400},
      {"namespace=a&pod=b&type=wall", 400},
      {"namespace=a&pod=b&format=%1b%5b31m", 400},
      {"namespace=a", 400},
      {"namespace=..%2F..&pod=..%2Fetc%2Fpasswd", 404},
      {"namespace=a&pod=" + std::string(3000, 'p'), 404},
      {"pod=no-such-uid", 404},
  };
  for (const auto& [query, status] : cases) {
    const auto start = std::chrono::steady_clock::now();
    const std::string answer =
        RawExchange(port_,
                    "GET /api/v1/profile?" + query +
                        " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
                    5s);
    EXPECT_EQ(StatusOf(answer), status)
        << query << ": " << answer.substr(0, 200);
    EXPECT_LT(std::chrono::steady_clock::now() - start, 2s) << query;
    EXPECT_EQ(answer.find('\x1b'), std::string::npos)
        << "no escape sequence echoed back";
  }
  ExpectServes("profile_parameter_abuse");
}

}  // namespace
}  // namespace trainscope::testing
