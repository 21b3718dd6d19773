// The CLI's one HTTP fetch (agent/cli/http_fetch.h) against servers that
// drip, stall or send without end: the overall deadline (--timeout) and the
// size cap (--max-response-bytes) hold while the body streams, and errors
// say what happened in a sentence.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>

#include "cli/http_fetch.h"
#include "cli/report_http.h"
#include "cli_test_server.h"

namespace trainscope::cli {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using testing::ScriptedHttpServer;
using namespace std::chrono_literals;

#ifdef TRAINSCOPE_TEST_UNDER_TSAN
constexpr auto kSlack = 4s;  // TSan slows every thread several times
#else
constexpr auto kSlack = 1500ms;
#endif

HttpTarget TargetOf(const std::string& url, HttpLimits limits) {
  HttpTarget target;
  EXPECT_TRUE(ParseHttpUrl(url, &target).ok()) << url;
  target.limits = limits;
  return target;
}

struct Outcome {
  Status status = Status::Ok();
  std::chrono::milliseconds took{};
};

// FetchWithinLimits on a thread of its own, so a test whose fetch never
// ends fails at `wait` instead of hanging (the server's destructor then
// ends the connection and the fetch with it).
Outcome FetchBounded(ScriptedHttpServer& server, HttpLimits limits,
                     std::chrono::milliseconds wait, HttpAnswer* answer) {
  const HttpTarget target = TargetOf(server.url(), limits);
  auto fetch = std::async(std::launch::async, [&target, answer] {
    const auto start = std::chrono::steady_clock::now();
    Outcome o;
    o.status = FetchWithinLimits(target, "/api/v1/report", {}, answer);
    o.took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    return o;
  });
  if (fetch.wait_for(wait) != std::future_status::ready) {
    ADD_FAILURE() << "the fetch ran past " << wait.count() << " ms";
  }
  return fetch.get();
}

TEST(CliFetchTest, BodyDrippedAtOneBytePer100MsEndsAtTheDeadline) {
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    const std::string body(100, ' ');  // 10 s at this pace
    server.Send(fd,
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                "Content-Length: 100\r\n\r\n");
    server.Drip(fd, body, 100ms);
  });
  HttpAnswer answer;
  const Outcome o = FetchBounded(server, {1.0, 1 << 20}, 1s + kSlack, &answer);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(), HasSubstr("timed out after 1 s (--timeout"));
  EXPECT_LT(o.took, 1s + kSlack);
  EXPECT_GE(o.took, 900ms);
}

TEST(CliFetchTest, HeaderDrippedAtOneBytePer100MsEndsAtTheDeadline) {
  // Every read gets a byte in time: only a deadline over the whole request
  // ends it (httplib's read timeout is per read).
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    std::string header = "HTTP/1.1 200 OK\r\n";
    for (int i = 0; i < 10; ++i) header += "X-Pad: 1\r\n";
    server.Drip(fd, header, 100ms);
  });
  HttpAnswer answer;
  const Outcome o = FetchBounded(server, {1.0, 1 << 20}, 1s + kSlack, &answer);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(), HasSubstr("--timeout"));
  EXPECT_LT(o.took, 1s + kSlack);
}

TEST(CliFetchTest, StalledServerEndsAtTheDeadline) {
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    server.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n{");
    while (!server.stopping()) std::this_thread::sleep_for(10ms);
    (void)fd;
  });
  HttpAnswer answer;
  const Outcome o =
      FetchBounded(server, {0.5, 1 << 20}, 500ms + kSlack, &answer);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(), HasSubstr("timed out after 0.5 s"));
}

TEST(CliFetchTest, EndlessBodyIsRefusedAtTheCapWithoutHoldingIt) {
  // No Content-Length: the body ends when the connection does, after 64 MiB
  // (the old client read it all, then failed on the JSON).
  constexpr size_t kSent = 64 << 20;
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    server.Send(fd, "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
    const std::string chunk(1 << 16, 'x');
    for (size_t sent = 0; sent < kSent; sent += chunk.size()) {
      if (!server.Send(fd, chunk)) return;
    }
  });
  HttpAnswer answer;
  const Outcome o = FetchBounded(server, {30, 1 << 20}, 20s, &answer);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(),
              HasSubstr("larger than 1048576 bytes (--max-response-bytes)"));
  EXPECT_LE(answer.body.size(), size_t{1} << 20);
  // The client hung up at the cap: the server could not send it all (the
  // socket buffers hold a few MiB at most).
  EXPECT_LT(server.bytes_sent(), kSent / 2);
}

TEST(CliFetchTest, DeclaredLengthOverTheCapIsRefusedBeforeTheBody) {
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    server.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 10737418240\r\n\r\n");
    while (!server.stopping() && server.Send(fd, std::string(4096, 'x'))) {
    }
  });
  HttpAnswer answer;
  const Outcome o = FetchBounded(server, {30, 1 << 20}, 10s, &answer);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(), HasSubstr("--max-response-bytes"));
  EXPECT_TRUE(answer.body.empty());
}

TEST(CliFetchTest, AnswerWithinTheLimitsIsRead) {
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    server.Send(fd, testing::HttpResponse(200, R"({"ok":true})"));
  });
  HttpAnswer answer;
  const Outcome o = FetchBounded(server, {5, 11}, 5s, &answer);
  ASSERT_TRUE(o.status.ok()) << o.status.message();
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(answer.body, R"({"ok":true})");  // exactly the cap
}

TEST(CliFetchTest, RefusedConnectionSaysSo) {
  const HttpTarget target = TargetOf(
      "http://127.0.0.1:" + std::to_string(testing::ClosedPort()), {5, 1024});
  HttpAnswer answer;
  const Status s = FetchWithinLimits(target, "/x", {}, &answer);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot reach http://127.0.0.1:"));
  EXPECT_THAT(s.message(), HasSubstr("connection refused"));
  EXPECT_THAT(s.message(), Not(HasSubstr(": Connection")));
}

TEST(CliFetchTest, UnresolvableHostSaysSo) {
  const HttpTarget target =
      TargetOf("http://trainscope-test.invalid:9", {5, 1024});
  HttpAnswer answer;
  const Status s = FetchWithinLimits(target, "/x", {}, &answer);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("cannot resolve host"));
}

TEST(CliFetchTest, ServerThatClosesMidBodySaysSo) {
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    server.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"a\"");
  });
  HttpAnswer answer;
  const Outcome o = FetchBounded(server, {5, 1024}, 5s, &answer);
  ASSERT_FALSE(o.status.ok());
  EXPECT_THAT(o.status.message(), HasSubstr("connection broke"));
}

TEST(CliFetchTest, GetJsonUsesTheSameLimits) {
  // The Prometheus path (report_cluster.cc) and the agent's report both go
  // through GetJson.
  ScriptedHttpServer server([&server](int fd, const std::string&) {
    server.Send(fd, "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n");
    server.Drip(fd, std::string(100, ' '), 100ms);
  });
  const HttpTarget target = TargetOf(server.url(), {1.0, 1 << 20});
  auto fetch = std::async(std::launch::async, [&target] {
    nlohmann::json out;
    return GetJson(target, "/api/v1/query_range", {{"query", "up"}}, &out);
  });
  ASSERT_EQ(fetch.wait_for(1s + kSlack), std::future_status::ready);
  const Status s = fetch.get();
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("/api/v1/query_range"));
  EXPECT_THAT(s.message(), HasSubstr("--timeout"));
}

}  // namespace
}  // namespace trainscope::cli
