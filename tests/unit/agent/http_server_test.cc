#include <gtest/gtest.h>
#include <httplib.h>

#include <stdexcept>

#include "http/server.h"

namespace trainscope {
namespace {

class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    server_ = std::make_unique<HttpServer>(HttpHandlers{
        .metrics =
            [this] {
              if (fail_metrics_) throw std::runtime_error("boom");
              return std::string(20000, 'a') + "\n";
            },
        .ready =
            [this](std::string* why) {
              *why = "no sample taken yet";
              return ready_;
            },
        .pods_json = [] { return std::string("{\"pods\":[]}"); },
        .report =
            [](const std::string& format) {
              return HttpResponse{200, "text/plain", "report:" + format};
            },
    });
    ASSERT_TRUE(server_->Bind("127.0.0.1", 0).ok());
    server_->Start();
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override { server_->Stop(); }

  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
  bool ready_ = false;
  bool fail_metrics_ = false;
};

TEST_F(HttpServerTest, ServesEndpoints) {
  auto metrics = client_->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"),
            "text/plain; version=0.0.4; charset=utf-8");
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
  EXPECT_EQ(client_->Get("/api/v1/pods")->body, "{\"pods\":[]}");
  EXPECT_EQ(client_->Get("/api/v1/report?format=text")->body, "report:text");
  EXPECT_EQ(client_->Get("/api/v1/report?format=xml")->status, 400);
}

TEST_F(HttpServerTest, ReadinessFollowsTheHandler) {
  auto not_ready = client_->Get("/readyz");
  EXPECT_EQ(not_ready->status, 503);
  EXPECT_NE(not_ready->body.find("no sample taken yet"), std::string::npos);
  ready_ = true;
  EXPECT_EQ(client_->Get("/readyz")->status, 200);
}

TEST_F(HttpServerTest, UnknownPathIs404AndWrongMethodIs405) {
  EXPECT_EQ(client_->Get("/nope")->status, 404);
  auto post = client_->Post("/metrics", "x", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(post->get_header_value("Allow"), "GET, HEAD");
  EXPECT_EQ(client_->Delete("/api/v1/report")->status, 405);
}

TEST_F(HttpServerTest, GzipWhenTheScraperAcceptsIt) {
  httplib::Headers headers = {{"Accept-Encoding", "gzip"}};
  client_->set_decompress(false);
  auto res = client_->Get("/metrics", headers);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->get_header_value("Content-Encoding"), "gzip");
  EXPECT_LT(res->body.size(), 20001u);
}

TEST_F(HttpServerTest, HeadAnswersHeadersWithoutBody) {
  auto res = client_->Head("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Length"), "20001");
  EXPECT_TRUE(res->body.empty());
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  client_->set_keep_alive(true);
  for (int i = 0; i < 5; ++i) {
    auto res = client_->Get("/healthz");
    ASSERT_TRUE(res) << i;
    EXPECT_EQ(res->body, "ok\n");
  }
  EXPECT_EQ(server_->stats().open_connections, 1u);
}

TEST_F(HttpServerTest, RequestBodyOfARefusedMethodIsDiscarded) {
  auto post =
      client_->Post("/api/v1/report", std::string(100000, 'x'), "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 405);
  EXPECT_EQ(client_->Get("/healthz")->status, 200);
}

TEST_F(HttpServerTest, HandlerExceptionIs500AndServerLivesOn) {
  fail_metrics_ = true;
  EXPECT_EQ(client_->Get("/metrics")->status, 500);
  fail_metrics_ = false;
  EXPECT_EQ(client_->Get("/metrics")->status, 200);
}

TEST(HttpServerBindTest, ListensOnIpv6Loopback) {
  HttpServer server(HttpHandlers{});
  if (!server.Bind("::1", 0).ok()) GTEST_SKIP() << "no IPv6 loopback";
  server.Start();
  httplib::Client client("::1", server.port());
  auto res = client.Get("/healthz");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(HttpServerBindTest, BadAddressIsAClearError) {
  HttpServer server(HttpHandlers{});
  Status status = server.Bind("203.0.113.300", 0);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot listen on 203.0.113.300:0"),
            std::string::npos)
      << status.message();
}

TEST(HttpServerBindTest, PortInUseIsAClearError) {
  HttpServer first(HttpHandlers{});
  ASSERT_TRUE(first.Bind("127.0.0.1", 0).ok());
  HttpServer second(HttpHandlers{});
  Status status = second.Bind("127.0.0.1", first.port());
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("cannot listen on 127.0.0.1:" +
                                  std::to_string(first.port())),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace trainscope

namespace trainscope {
namespace {

TEST(HttpServerLifecycleTest, StopRightAfterStartDoesNotHang) {
  for (int i = 0; i < 20; ++i) {
    HttpServer server(HttpHandlers{});
    ASSERT_TRUE(server.Bind("127.0.0.1", 0).ok());
    server.Start();
    server.Stop();
  }
}

}  // namespace
}  // namespace trainscope
