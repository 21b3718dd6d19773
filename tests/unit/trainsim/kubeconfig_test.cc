#include "kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A kubeconfig with two contexts; `cluster` and `user` are the bodies of
// the current context's entries.
std::string Config(const std::string& cluster, const std::string& user) {
  return R"(apiVersion: v1
kind: Config
current-context: test
clusters:
- name: other
  cluster:
    server: https://10.0.0.1:6443
- name: test
  cluster:
)" + cluster +
         R"(
users:
- name: other
  user:
    token: not-this-one
- name: admin
  user:
)" + user +
         R"(
contexts:
- name: other
  context: {cluster: other, user: other}
- name: test
  context: {cluster: test, user: admin}
)";
}

// A scratch directory removed by the destructor.
class KubeConfigTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("kubeconfig-test-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "ca.crt") << "-----BEGIN CERTIFICATE-----\n";
    std::ofstream(dir_ / "token") << "file-token\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Error(const std::string& text) {
    try {
      ParseKubeConfig(text, dir_.string());
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "(parsed)";
  }

  fs::path dir_;
};

TEST_F(KubeConfigTest, ReadsTheCurrentContextsServerCaAndToken) {
  const KubeConfig c =
      ParseKubeConfig(Config("    server: https://127.0.0.1:6443\n"
                             "    certificate-authority: " +
                                 (dir_ / "ca.crt").string(),
                             "    token: abc123"),
                      dir_.string());
  EXPECT_EQ(c.server, "https://127.0.0.1:6443");
  EXPECT_EQ(c.ca_file, (dir_ / "ca.crt").string());
  EXPECT_EQ(c.ca_pem, "");
  EXPECT_EQ(c.token, "abc123");
}

TEST_F(KubeConfigTest, ResolvesRelativePathsAgainstTheFilesDirectory) {
  const KubeConfig c =
      ParseKubeConfig(Config("    server: https://127.0.0.1:6443\n"
                             "    certificate-authority: ca.crt",
                             "    tokenFile: token"),
                      dir_.string());
  EXPECT_EQ(c.ca_file, (dir_ / "ca.crt").string());
  EXPECT_EQ(c.token, "file-token") << "read and trimmed";
}

TEST_F(KubeConfigTest, DecodesCertificateAuthorityData) {
  // base64 of "-----BEGIN CERT-----\n", split over two lines.
  const KubeConfig c = ParseKubeConfig(
      Config("    server: https://127.0.0.1:6443\n"
             "    certificate-authority-data: LS0tLS1CRUdJTiBDRVJ\n"
             "      ULS0tLS0K",
             "    token: t"),
      dir_.string());
  EXPECT_EQ(c.ca_pem, "-----BEGIN CERT-----\n");
  EXPECT_EQ(c.ca_file, "");
}

TEST_F(KubeConfigTest, RefusesWhatItDoesNotSupportByName) {
  const std::string server = "    server: https://127.0.0.1:6443";
  EXPECT_THAT(Error(Config(server,
                           "    client-certificate: a.crt\n"
                           "    client-key: a.key")),
              HasSubstr("users[admin].user.client-certificate: not supported"));
  EXPECT_THAT(Error(Config(server, "    exec:\n      command: aws")),
              HasSubstr("users[admin].user.exec: not supported"));
  EXPECT_THAT(Error(Config(server + "\n    insecure-skip-tls-verify: true",
                           "    token: t")),
              HasSubstr("clusters[test].cluster.insecure-skip-tls-verify: not "
                        "supported"));
  EXPECT_THAT(Error(Config(server, "    username: u\n    password: p")),
              HasSubstr("users[admin].user.username: not supported"));
}

TEST_F(KubeConfigTest, NamesWhatIsMissingOrWrong) {
  const std::string server = "    server: https://127.0.0.1:6443";
  EXPECT_THAT(Error(Config(server, "    {}")),
              HasSubstr("users[admin].user: no token"));
  EXPECT_THAT(
      Error(Config("    certificate-authority: ca.crt", "    token: t")),
      HasSubstr("clusters[test].cluster.server: missing"));
  EXPECT_THAT(Error(Config("    server: 127.0.0.1:6443", "    token: t")),
              HasSubstr("is not an http(s) URL"));
  EXPECT_THAT(Error(Config(server + "\n    certificate-authority: nope.crt",
                           "    token: t")),
              HasSubstr("certificate-authority: " +
                        (dir_ / "nope.crt").string() + ": cannot be read"));
  EXPECT_THAT(
      Error(Config(server + "\n    certificate-authority-data: \"no*base64\"",
                   "    token: t")),
      HasSubstr("certificate-authority-data: not base64"));
  EXPECT_THAT(Error(Config(server, "    token: t\n    tokenFile: token")),
              HasSubstr("both token and tokenFile"));
  EXPECT_THAT(Error("apiVersion: v1\nkind: Config\n"),
              HasSubstr("current-context: missing"));
  EXPECT_THAT(Error("current-context: nowhere\ncontexts: []\n"),
              HasSubstr("contexts: no entry named \"nowhere\""));
  EXPECT_THAT(Error("[1, 2"), HasSubstr("kubeconfig: YAML"));
}

TEST_F(KubeConfigTest, LoadsTheFileTheTestPlatformWrites) {
  // The shape scripts/platform.sh writes (absolute CA path, inline token).
  const fs::path file = dir_ / "kubeconfig";
  std::ofstream(file) << "apiVersion: v1\nkind: Config\nclusters:\n"
                         "- name: test\n  cluster:\n"
                         "    server: https://127.0.0.1:40000\n"
                         "    certificate-authority: "
                      << (dir_ / "ca.crt").string()
                      << "\nusers:\n- name: admin\n  user:\n"
                         "    token: 0123abcd\ncontexts:\n- name: test\n"
                         "  context: {cluster: test, user: admin}\n"
                         "current-context: test\n";
  const KubeConfig c = LoadKubeConfig(file.string());
  EXPECT_EQ(c.server, "https://127.0.0.1:40000");
  EXPECT_EQ(c.token, "0123abcd");
}

}  // namespace
}  // namespace trainsim
