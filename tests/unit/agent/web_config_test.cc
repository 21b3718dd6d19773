// --web-config-file: the exporter-toolkit format, every bad file refused
// with the field it is about.
#include "http/web_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>

#include "tls_files.h"

namespace trainscope {
namespace {

namespace fs = std::filesystem;
using testing::BcryptHash;
using ::testing::HasSubstr;
using testing::TlsFiles;
using testing::WriteFile;

class WebConfigTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string((fs::temp_directory_path() /
                            ("trainscope-webcfg-" + std::to_string(::getpid())))
                               .string());
    files_ = new TlsFiles();
    std::string error;
    ASSERT_TRUE(testing::MakeTlsFiles(*dir_, files_, &error)) << error;
    hash_ = new std::string(BcryptHash("secret"));
    ASSERT_FALSE(hash_->empty());
  }
  static void TearDownTestSuite() {
    std::error_code ec;
    fs::remove_all(*dir_, ec);
    delete dir_;
    delete files_;
    delete hash_;
  }
  static std::string* dir_;
  static TlsFiles* files_;
  static std::string* hash_;
};
std::string* WebConfigTest::dir_ = nullptr;
TlsFiles* WebConfigTest::files_ = nullptr;
std::string* WebConfigTest::hash_ = nullptr;

TEST_F(WebConfigTest, EmptyFileMeansPlainHttpWithoutAuth) {
  WebConfig web;
  ASSERT_TRUE(ParseWebConfig("", *dir_, &web).ok());
  EXPECT_FALSE(web.tls_enabled);
  EXPECT_FALSE(web.auth_enabled());
}

TEST_F(WebConfigTest, ReadsTlsAndUsersRelativeToTheConfigDirectory) {
  WebConfig web;
  const std::string yaml =
      "tls_server_config:\n"
      "  cert_file: server.crt\n"
      "  key_file: server.key\n"
      "  client_ca_file: ca.crt\n"
      "  client_auth_type: RequireAndVerifyClientCert\n"
      "  min_version: TLS13\n"
      "basic_auth_users:\n"
      "  prometheus: " +
      *hash_ + "\n";
  Status s = ParseWebConfig(yaml, *dir_, &web);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(web.tls_enabled);
  EXPECT_EQ(web.tls.cert_file, files_->server_cert);
  EXPECT_THAT(web.tls.cert_pem, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_THAT(web.tls.key_pem, HasSubstr("PRIVATE KEY"));
  EXPECT_THAT(web.tls.client_ca_pem, HasSubstr("BEGIN CERTIFICATE"));
  EXPECT_EQ(web.tls.client_auth, ClientAuth::kRequireVerify);
  EXPECT_EQ(web.tls.min_version, "TLS13");
  ASSERT_EQ(web.basic_auth_users.count("prometheus"), 1u);
  EXPECT_EQ(web.basic_auth_users["prometheus"], *hash_);
  EXPECT_TRUE(web.auth_enabled());
}

TEST_F(WebConfigTest, BearerTokenFileIsATrainscopeExtension) {
  const std::string tokens = *dir_ + "/tokens";
  ASSERT_TRUE(WriteFile(tokens, "first-token\n\n  second-token  \r\n"));
  WebConfig web;
  Status s = ParseWebConfig(
      "authorization:\n  type: Bearer\n  credentials_file: " + tokens + "\n",
      *dir_, &web);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_THAT(web.bearer_tokens,
              ::testing::ElementsAre("first-token", "  second-token"));
  EXPECT_FALSE(web.tls_enabled);
  EXPECT_TRUE(web.auth_enabled());
}

TEST_F(WebConfigTest, LoadNamesTheFile) {
  WebConfig web;
  Status s = LoadWebConfig(*dir_ + "/missing.yml", &web);
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("missing.yml: cannot read"));
  const std::string path = *dir_ + "/web.yml";
  ASSERT_TRUE(WriteFile(path,
                        "tls_server_config:\n  cert_file: server.crt\n  "
                        "key_file: server.key\n"));
  s = LoadWebConfig(path, &web);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_TRUE(web.tls_enabled);
}

// A web config that cannot be read as a file stops the agent: naming the
// Secret's mount directory instead of the file inside it once started the
// agent open (TLS off, no users).
TEST_F(WebConfigTest, ADirectoryFifoOrDanglingLinkIsRefused) {
  const fs::path fifo = fs::path(*dir_) / "web.fifo";
  fs::remove(fifo);
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const fs::path dangling = fs::path(*dir_) / "dangling.yml";
  fs::remove(dangling);
  fs::create_symlink(fs::path(*dir_) / "gone.yml", dangling);
  const fs::path big = fs::path(*dir_) / "big.yml";
  ASSERT_TRUE(WriteFile(big, std::string(2 << 20, '#')));
  const std::pair<std::string, std::string> cases[] = {
      {*dir_, "is a directory, not a file (name the file inside it)"},
      {fifo.string(), "is a FIFO, not a file"},
      {dangling.string(), "cannot read: No such file or directory"},
      {big.string(), "more than the 1048576"},
      {"/dev/null", "is a device"},
  };
  for (const auto& [path, message] : cases) {
    WebConfig web;
    Status s = LoadWebConfig(path, &web);  // returns at once, even the FIFO
    EXPECT_FALSE(s.ok()) << path;
    EXPECT_THAT(s.message(), HasSubstr(message)) << path;
  }
}

struct BadConfig {
  const char* name;
  std::string yaml;  // "$DIR" and "$HASH" are replaced
  const char* message;
};

class WebConfigBadTest : public WebConfigTest,
                         public ::testing::WithParamInterface<BadConfig> {};

TEST_P(WebConfigBadTest, IsRefusedNamingTheField) {
  auto expand = [](std::string text) {
    for (auto [token, value] :
         {std::pair<std::string, std::string>{"$DIR", *dir_},
          {"$HASH", *hash_}}) {
      for (size_t at; (at = text.find(token)) != std::string::npos;) {
        text.replace(at, token.size(), value);
      }
    }
    return text;
  };
  const std::string yaml = expand(GetParam().yaml);
  WebConfig web;
  Status s = ParseWebConfig(yaml, *dir_, &web);
  ASSERT_FALSE(s.ok()) << yaml;
  EXPECT_THAT(s.message(), HasSubstr(expand(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, WebConfigBadTest,
    ::testing::Values(
        BadConfig{"not_yaml", "tls_server_config: [unclosed", "YAML"},
        BadConfig{"top_not_map", "- a\n- b\n", "expected a YAML map"},
        BadConfig{"unknown_top", "basic_auth_user:\n  a: b\n",
                  "basic_auth_user: unknown field"},
        BadConfig{"http_server_config", "http_server_config:\n  http2: true\n",
                  "http_server_config: unknown field"},
        BadConfig{"tls_not_map", "tls_server_config: yes\n",
                  "tls_server_config: expected a map"},
        BadConfig{"cert_without_key",
                  "tls_server_config:\n  cert_file: server.crt\n",
                  "tls_server_config.key_file: missing"},
        BadConfig{"key_without_cert",
                  "tls_server_config:\n  key_file: server.key\n",
                  "tls_server_config.cert_file: missing"},
        BadConfig{"cert_missing",
                  "tls_server_config:\n  cert_file: nope.crt\n  key_file: "
                  "server.key\n",
                  "tls_server_config.cert_file: $DIR/nope.crt: cannot read"},
        BadConfig{"key_mismatch",
                  "tls_server_config:\n  cert_file: server.crt\n  key_file: "
                  "client.key\n",
                  "tls_server_config.cert_file"},
        BadConfig{"cert_not_pem",
                  "tls_server_config:\n  cert_file: server.ext\n  key_file: "
                  "server.key\n",
                  "tls_server_config.cert_file"},
        BadConfig{"unsupported_tls_field",
                  "tls_server_config:\n  cert_file: server.crt\n  key_file: "
                  "server.key\n  cipher_suites: [TLS_AES_128_GCM_SHA256]\n",
                  "tls_server_config.cipher_suites: not supported"},
        BadConfig{"bad_client_auth",
                  "tls_server_config:\n  cert_file: server.crt\n  key_file: "
                  "server.key\n  client_auth_type: Always\n",
                  "tls_server_config.client_auth_type: \"Always\""},
        BadConfig{"unverified_client_auth",
                  "tls_server_config:\n  cert_file: server.crt\n  key_file: "
                  "server.key\n  client_auth_type: RequireAnyClientCert\n",
                  "RequireAnyClientCert"},
        BadConfig{
            "client_auth_without_ca",
            "tls_server_config:\n  cert_file: server.crt\n  key_file: "
            "server.key\n  client_auth_type: RequireAndVerifyClientCert\n",
            "tls_server_config.client_ca_file: missing"},
        BadConfig{"ca_without_client_auth",
                  "tls_server_config:\n  cert_file: server.crt\n  key_file: "
                  "server.key\n  client_ca_file: ca.crt\n",
                  "tls_server_config.client_auth_type"},
        BadConfig{"ca_not_pem",
                  "tls_server_config:\n  cert_file: server.crt\n  key_file: "
                  "server.key\n  client_ca_file: server.ext\n  "
                  "client_auth_type: VerifyClientCertIfGiven\n",
                  "tls_server_config.client_ca_file"},
        BadConfig{"old_tls",
                  "tls_server_config:\n  cert_file: server.crt\n  key_file: "
                  "server.key\n  min_version: TLS10\n",
                  "tls_server_config.min_version"},
        BadConfig{"users_not_map", "basic_auth_users: [a]\n",
                  "basic_auth_users: expected a map"},
        BadConfig{"plain_password", "basic_auth_users:\n  alice: secret\n",
                  "basic_auth_users.alice: not a bcrypt hash"},
        BadConfig{"user_twice",
                  "basic_auth_users:\n  alice: $HASH\n  alice: $HASH\n",
                  "basic_auth_users.alice: listed twice"},
        BadConfig{"cert_is_a_directory",
                  "tls_server_config:\n  cert_file: $DIR\n  key_file: "
                  "server.key\n",
                  "tls_server_config.cert_file: $DIR is a directory"},
        BadConfig{"token_file_is_a_directory",
                  "authorization:\n  credentials_file: /\n",
                  "authorization.credentials_file: / is a directory"},
        BadConfig{"sha_crypt",
                  "basic_auth_users:\n  alice: "
                  "\"$6$salt$IxDD3jeSOb5eB1CX5LBsqZFVkJdido3OUILO5Ifz5iwMuTS4X"
                  "MS130MTSuDDl3aCI6WouIL9AjRbLCelDCy.g.\"\n",
                  "basic_auth_users.alice: not a bcrypt hash"},
        BadConfig{"colon_user", "basic_auth_users:\n  \"a:b\": $HASH\n",
                  "basic_auth_users.a:b"},
        BadConfig{"bearer_wrong_type",
                  "authorization:\n  type: Basic\n  credentials_file: x\n",
                  "authorization.type"},
        BadConfig{"bearer_no_file", "authorization:\n  type: Bearer\n",
                  "authorization.credentials_file: missing"},
        BadConfig{"bearer_missing_file",
                  "authorization:\n  credentials_file: /nonexistent/token\n",
                  "authorization.credentials_file: /nonexistent/token: cannot "
                  "read"},
        BadConfig{"bearer_unknown_key", "authorization:\n  credentials: abc\n",
                  "authorization.credentials: unknown field"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

}  // namespace
}  // namespace trainscope
