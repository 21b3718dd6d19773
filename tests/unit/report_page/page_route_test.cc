// GET / on the agent's HTTP server: the report page with its security
// headers. (The page's content is page_test's; this pins the route.)
#include <gtest/gtest.h>
#include <httplib.h>

#include "http/server.h"
#include "report_page/page.h"

namespace trainscope {
namespace {

TEST(PageRouteTest, ServesThePageWithAContentSecurityPolicy) {
  HttpServer server(HttpHandlers{
      .metrics = [] { return std::string(); },
      .ready = [](std::string*) { return true; },
      .pods_json = [] { return std::string("{}"); },
      .report = [](const std::string&) { return HttpResponse{}; },
      .page =
          [] {
            return HttpResponse{
                200, "text/html; charset=utf-8",
                page::RenderReportPage({{"node", "node-a"},
                                        {"jobs", nlohmann::json::array()},
                                        {"diagnoses", nlohmann::json::array()}},
                                       {.agent_links = true})};
          },
  });
  ASSERT_TRUE(server.Bind("127.0.0.1", 0).ok());
  server.Start();
  httplib::Client client("127.0.0.1", server.port());
  auto res = client.Get("/");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/html; charset=utf-8");
  EXPECT_EQ(res->get_header_value("Content-Security-Policy"),
            page::kContentSecurityPolicyHeader);
  EXPECT_NE(res->get_header_value("Content-Security-Policy")
                .find("frame-ancestors 'none'"),
            std::string::npos);
  EXPECT_EQ(res->get_header_value("X-Content-Type-Options"), "nosniff");
  EXPECT_NE(res->body.find("Trainscope — node node-a"), std::string::npos);
  EXPECT_EQ(client.Post("/", "", "text/plain")->status, 405);
  EXPECT_EQ(client.Get("/index.html")->status, 404);
  server.Stop();
}

}  // namespace
}  // namespace trainscope
