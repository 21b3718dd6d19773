// The HTTP server under a web config: TLS, basic auth, bearer tokens and
// client certificates, spoken to by an independent client (cpp-httplib over
// OpenSSL; the server is libmicrohttpd over GnuTLS).
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "http/server.h"
#include "tls_files.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
using testing::TlsFiles;

class HttpServerTlsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string((fs::temp_directory_path() /
                            ("trainscope-tls-" + std::to_string(::getpid())))
                               .string());
    files_ = new TlsFiles();
    std::string error;
    ASSERT_TRUE(testing::MakeTlsFiles(*dir_, files_, &error)) << error;
    ASSERT_TRUE(testing::WriteFile(*dir_ + "/token", "the-token\n"));
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
    delete files_;
  }

  // Starts a server with this web config (YAML, relative to the files).
  void Start(const std::string& yaml) {
    WebConfig web;
    Status parsed = ParseWebConfig(yaml, *dir_, &web);
    ASSERT_TRUE(parsed.ok()) << parsed.message();
    server_ = std::make_unique<HttpServer>(
        HttpHandlers{
            .metrics = [] { return std::string("up 1\n"); },
            .ready = [](std::string*) { return true; },
            .pods_json = [] { return std::string("{\"pods\":[]}"); },
            .report =
                [](const std::string&) {
                  return HttpResponse{200, "text/plain", "report"};
                },
        },
        HttpLimits{}, std::move(web));
    ASSERT_TRUE(server_->Bind("127.0.0.1", 0).ok());
    server_->Start();
  }
  void TearDown() override {
    if (server_) server_->Stop();
  }

  std::unique_ptr<httplib::SSLClient> Client(
      const std::string& cert = "", const std::string& key = "") const {
    auto client = std::make_unique<httplib::SSLClient>(
        "127.0.0.1", server_->port(), cert, key);
    client->set_ca_cert_path(files_->ca_cert.c_str());
    client->enable_server_certificate_verification(true);
    client->set_connection_timeout(5);
    client->set_read_timeout(5);
    return client;
  }

  static std::string* dir_;
  static TlsFiles* files_;
  std::unique_ptr<HttpServer> server_;
};
std::string* HttpServerTlsTest::dir_ = nullptr;
TlsFiles* HttpServerTlsTest::files_ = nullptr;

constexpr const char* kTls =
    "tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n";

TEST_F(HttpServerTlsTest, BasicAuthOverTls) {
  Start(std::string(kTls) + "basic_auth_users:\n  prometheus: " +
        testing::BcryptHash("s3cret") + "\n");
  auto anonymous = Client()->Get("/metrics");
  ASSERT_TRUE(anonymous) << httplib::to_string(anonymous.error());
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_EQ(anonymous->get_header_value("WWW-Authenticate").rfind("Basic", 0),
            0u);
  auto client = Client();
  client->set_basic_auth("prometheus", "wrong");
  EXPECT_EQ(client->Get("/metrics")->status, 401);
  EXPECT_EQ(client->Get("/api/v1/pods")->status, 401);
  EXPECT_EQ(client->Get("/no-such-path")->status, 401);  // no path probing
  client->set_basic_auth("prometheus", "s3cret");
  auto ok = client->Get("/metrics");
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
  EXPECT_EQ(ok->body, "up 1\n");
  EXPECT_EQ(client->Get("/api/v1/pods")->status, 200);
  // Probes need no credentials.
  EXPECT_EQ(Client()->Get("/healthz")->status, 200);
  EXPECT_EQ(Client()->Get("/readyz")->status, 200);
  EXPECT_EQ(server_->stats().unauthorized_total, 4u);
}

TEST_F(HttpServerTlsTest, PlainHttpToTheTlsPortFailsAndTheServerLivesOn) {
  Start(kTls);
  httplib::Client plain("127.0.0.1", server_->port());
  plain.set_read_timeout(5);
  auto res = plain.Get("/metrics");
  EXPECT_TRUE(!res || res->status != 200);
  auto ok = Client()->Get("/metrics");
  ASSERT_TRUE(ok) << httplib::to_string(ok.error());
  EXPECT_EQ(ok->status, 200);
}

TEST_F(HttpServerTlsTest, BearerTokenWithoutTls) {
  Start("authorization:\n  credentials_file: token\n");
  httplib::Client client("127.0.0.1", server_->port());
  EXPECT_EQ(client.Get("/metrics")->status, 401);
  client.set_bearer_token_auth("not-the-token");
  EXPECT_EQ(client.Get("/metrics")->status, 401);
  client.set_bearer_token_auth("the-token");
  EXPECT_EQ(client.Get("/metrics")->status, 200);
}

TEST_F(HttpServerTlsTest, RequiredClientCertificate) {
  Start(std::string(kTls) +
        "  client_ca_file: ca.crt\n"
        "  client_auth_type: RequireAndVerifyClientCert\n");
  auto with_cert =
      Client(files_->client_cert, files_->client_key)->Get("/metrics");
  ASSERT_TRUE(with_cert) << httplib::to_string(with_cert.error());
  EXPECT_EQ(with_cert->status, 200);
  auto without = Client()->Get("/metrics");
  EXPECT_TRUE(!without || without->status == 403);
  auto stranger =
      Client(files_->stranger_cert, files_->stranger_key)->Get("/metrics");
  EXPECT_TRUE(!stranger || stranger->status == 403);
  EXPECT_EQ(Client()->Get("/healthz")->status, 200);
}

TEST_F(HttpServerTlsTest, OptionalClientCertificateMustVerifyWhenGiven) {
  Start(std::string(kTls) +
        "  client_ca_file: ca.crt\n"
        "  client_auth_type: VerifyClientCertIfGiven\n");
  EXPECT_EQ(Client()->Get("/metrics")->status, 200);
  EXPECT_EQ(
      Client(files_->client_cert, files_->client_key)->Get("/metrics")->status,
      200);
  auto stranger =
      Client(files_->stranger_cert, files_->stranger_key)->Get("/metrics");
  EXPECT_TRUE(!stranger || stranger->status == 403);
}

// min_version: checked with the openssl command, which can pin a version.
TEST_F(HttpServerTlsTest, MinVersionRefusesOlderProtocols) {
  auto handshake = [this](const char* version) {
    const std::string cmd = "openssl s_client -connect 127.0.0.1:" +
                            std::to_string(server_->port()) + " " + version +
                            " -CAfile " + files_->ca_cert +
                            " -verify_return_error </dev/null >/dev/null 2>&1";
    return std::system(cmd.c_str()) == 0;
  };
  Start(std::string(kTls) + "  min_version: TLS13\n");
  EXPECT_TRUE(handshake("-tls1_3"));
  EXPECT_FALSE(handshake("-tls1_2"));
  server_->Stop();
  Start(kTls);  // default TLS12
  EXPECT_TRUE(handshake("-tls1_2"));
}

}  // namespace
}  // namespace trainscope
