#include <gtest/gtest.h>
#include <zlib.h>

#include <stdexcept>

#include "http/routes.h"

namespace trainscope {
namespace {

HttpRequest Get(std::string path, std::string method = "GET") {
  HttpRequest req;
  req.method = std::move(method);
  req.path = std::move(path);
  return req;
}

std::string Header(const HttpResponse& res, const std::string& name) {
  for (const auto& [k, v] : res.headers) {
    if (k == name) return v;
  }
  return "";
}

class HttpRouterTest : public ::testing::Test {
 protected:
  HttpRouter router_{AgentRoutes(HttpHandlers{
      .metrics =
          [this] {
            if (fail_) throw std::runtime_error("render failed");
            return std::string("m 1\n");
          },
      .ready =
          [](std::string* why) {
            *why = "warming up";
            return false;
          },
      .pods_json = [] { return std::string("{}"); },
      .report =
          [](const std::string& f) {
            return HttpResponse{200, "text/plain", "format=" + f};
          },
  })};
  bool fail_ = false;
};

TEST_F(HttpRouterTest, RoutesGetAndHead) {
  EXPECT_EQ(router_.Handle(Get("/metrics")).body, "m 1\n");
  EXPECT_EQ(router_.Handle(Get("/metrics", "HEAD")).status, 200);
  EXPECT_EQ(router_.Handle(Get("/healthz")).body, "ok\n");
  HttpResponse ready = router_.Handle(Get("/readyz"));
  EXPECT_EQ(ready.status, 503);
  EXPECT_EQ(ready.body, "not ready: warming up\n");
  EXPECT_EQ(router_.Handle(Get("/api/v1/pods")).content_type,
            "application/json");
}

TEST_F(HttpRouterTest, ReportFormatIsChecked) {
  HttpRequest req = Get("/api/v1/report");
  EXPECT_EQ(router_.Handle(req).body, "format=");
  req.query["format"] = "text";
  EXPECT_EQ(router_.Handle(req).body, "format=text");
  req.query["format"] = "xml";
  EXPECT_EQ(router_.Handle(req).status, 400);
}

TEST_F(HttpRouterTest, UnknownPathIs404NamingTheEndpoints) {
  HttpResponse res = router_.Handle(Get("/nope"));
  EXPECT_EQ(res.status, 404);
  EXPECT_NE(res.body.find("not found: /nope"), std::string::npos);
  EXPECT_NE(res.body.find("/api/v1/report"), std::string::npos);
  EXPECT_EQ(router_.Handle(Get("/nope", "POST")).status, 404);
}

TEST_F(HttpRouterTest, OtherMethodsAre405WithAllow) {
  for (const char* method : {"POST", "PUT", "DELETE", "PATCH", "OPTIONS"}) {
    HttpResponse res = router_.Handle(Get("/metrics", method));
    EXPECT_EQ(res.status, 405) << method;
    EXPECT_EQ(Header(res, "Allow"), "GET, HEAD") << method;
    EXPECT_EQ(res.body, std::string("method ") + method + " not allowed\n");
  }
}

TEST_F(HttpRouterTest, ThrowingHandlerIs500) {
  fail_ = true;
  HttpResponse res = router_.Handle(Get("/metrics"));
  EXPECT_EQ(res.status, 500);
  EXPECT_NE(res.body.find("render failed"), std::string::npos);
}

TEST(HttpRouterExtraTest, AddingARouteIsOneEntry) {
  std::vector<HttpRoute> routes = AgentRoutes(HttpHandlers{});
  routes.push_back({"/extra", [](const HttpRequest&) {
                      return HttpResponse{200, "text/html", "<p>hi</p>"};
                    }});
  HttpRouter router(std::move(routes));
  EXPECT_EQ(router.Handle(Get("/extra")).body, "<p>hi</p>");
}

struct GzipCase {
  const char* accept;
  bool gzip;
};

class AcceptsGzipTest : public ::testing::TestWithParam<GzipCase> {};

TEST_P(AcceptsGzipTest, ParsesAcceptEncoding) {
  EXPECT_EQ(AcceptsGzip(GetParam().accept), GetParam().gzip)
      << GetParam().accept;
}

INSTANTIATE_TEST_SUITE_P(
    Table, AcceptsGzipTest,
    ::testing::Values(GzipCase{"", false}, GzipCase{"gzip", true},
                      GzipCase{"GZIP", true}, GzipCase{"deflate, gzip", true},
                      GzipCase{"gzip;q=0.5", true}, GzipCase{"gzip;q=0", false},
                      GzipCase{"gzip; q=0.000", false},
                      GzipCase{"identity", false}, GzipCase{"*", true},
                      GzipCase{"x-gzip2", false}, GzipCase{"br,gzip", true}));

std::string Gunzip(const std::string& in) {
  z_stream zs{};
  EXPECT_EQ(inflateInit2(&zs, 15 + 16), Z_OK);
  std::string out(1 << 20, '\0');
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  EXPECT_EQ(inflate(&zs, Z_FINISH), Z_STREAM_END);
  out.resize(zs.total_out);
  inflateEnd(&zs);
  return out;
}

TEST(MaybeGzipTest, CompressesLargeSuccessfulBodiesTheClientAccepts) {
  HttpRequest req = Get("/metrics");
  req.accept_encoding = "gzip";
  const std::string body(5000, 'x');
  HttpResponse res{200, "text/plain", body};
  MaybeGzip(req, res);
  EXPECT_EQ(Header(res, "Content-Encoding"), "gzip");
  EXPECT_LT(res.body.size(), body.size());
  EXPECT_EQ(Gunzip(res.body), body);

  HttpResponse small{200, "text/plain", "ok\n"};
  MaybeGzip(req, small);
  EXPECT_EQ(small.body, "ok\n");

  HttpResponse plain{200, "text/plain", body};
  req.accept_encoding = "identity";
  MaybeGzip(req, plain);
  EXPECT_EQ(plain.body, body);
  EXPECT_EQ(Header(plain, "Content-Encoding"), "");
}

}  // namespace
}  // namespace trainscope
