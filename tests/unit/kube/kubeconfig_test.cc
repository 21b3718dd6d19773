#include "kube/kubeconfig.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace trainscope::kube {
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
  EXPECT_THAT(Error(Config(server, "    auth-provider: {name: oidc}")),
              HasSubstr("users[admin].user.auth-provider: not supported"));
  EXPECT_THAT(Error(Config(server + "\n    insecure-skip-tls-verify: true",
                           "    token: t")),
              HasSubstr("clusters[test].cluster.insecure-skip-tls-verify: not "
                        "supported"));
  EXPECT_THAT(Error(Config(server, "    username: u\n    password: p")),
              HasSubstr("users[admin].user.username: not supported"));
  EXPECT_THAT(Error(Config(server, "    token: t\n    as: someone")),
              HasSubstr("users[admin].user.as: not supported"));
}

// kind's and kubeadm's admin kubeconfigs: a client certificate, inline or
// in files.
TEST_F(KubeConfigTest, ReadsClientCertificatesFromDataOrFiles) {
  const std::string server = "    server: https://127.0.0.1:6443";
  std::ofstream(dir_ / "admin.crt") << "CERT";
  std::ofstream(dir_ / "admin.key") << "KEY";
  KubeConfig c = ParseKubeConfig(Config(server,
                                        "    client-certificate: admin.crt\n"
                                        "    client-key: admin.key"),
                                 dir_.string());
  EXPECT_EQ(c.client_cert_pem, "CERT");
  EXPECT_EQ(c.client_key_pem, "KEY");
  EXPECT_EQ(c.token, "");
  // base64 of "CERT\n" and "KEY\n".
  c = ParseKubeConfig(Config(server,
                             "    client-certificate-data: Q0VSVAo=\n"
                             "    client-key-data: S0VZCg=="),
                      dir_.string());
  EXPECT_EQ(c.client_cert_pem, "CERT\n");
  EXPECT_EQ(c.client_key_pem, "KEY\n");
  EXPECT_THAT(Error(Config(server, "    client-certificate: admin.crt")),
              HasSubstr("a client certificate needs its key"));
  EXPECT_THAT(Error(Config(server,
                           "    client-certificate: admin.crt\n"
                           "    client-certificate-data: Q0VSVAo=\n"
                           "    client-key: admin.key")),
              HasSubstr("both client-certificate and client-certificate-data"));
}

TEST_F(KubeConfigTest, ReadsAnExecPluginAsKubectlDoes) {
  const KubeConfig c = ParseKubeConfig(
      Config("    server: https://127.0.0.1:6443",
             "    exec:\n"
             "      apiVersion: client.authentication.k8s.io/v1beta1\n"
             "      command: aws\n"
             "      args: [eks, get-token, --cluster-name, prod]\n"
             "      env: [{name: AWS_PROFILE, value: ml}]"),
      dir_.string());
  ASSERT_TRUE(c.has_exec);
  EXPECT_EQ(c.exec.command, "aws") << "a bare name stays a PATH lookup";
  EXPECT_THAT(c.exec.args, ::testing::ElementsAre("eks", "get-token",
                                                  "--cluster-name", "prod"));
  EXPECT_EQ(c.exec.env.at("AWS_PROFILE"), "ml");
  const KubeConfig relative = ParseKubeConfig(
      Config("    server: https://127.0.0.1:6443",
             "    exec:\n"
             "      apiVersion: client.authentication.k8s.io/v1\n"
             "      command: ./bin/token"),
      dir_.string());
  EXPECT_EQ(relative.exec.command, (dir_ / "bin/token").string());
  EXPECT_THAT(Error(Config("    server: https://127.0.0.1:6443",
                           "    exec:\n"
                           "      apiVersion: client.authentication.k8s.io/"
                           "v1alpha1\n"
                           "      command: x")),
              HasSubstr("exec.apiVersion: \"client.authentication.k8s.io/"
                        "v1alpha1\""));
}

// A plugin that prints `output` and exits with `status`.
std::string Plugin(const fs::path& dir, const std::string& output, int status) {
  const fs::path file = dir / ("plugin-" + std::to_string(status));
  std::ofstream(file) << "#!/bin/sh\n"
                         "test -n \"$KUBERNETES_EXEC_INFO\" || exit 9\n"
                         "cat <<'EOF'\n"
                      << output << "\nEOF\nexit " << status << "\n";
  fs::permissions(file, fs::perms::owner_all);
  return file.string();
}

TEST_F(KubeConfigTest, RunsTheCredentialPluginForItsToken) {
  KubeConfig c;
  c.has_exec = true;
  c.exec.api_version = "client.authentication.k8s.io/v1";
  c.exec.command = Plugin(dir_,
                          R"({"apiVersion":"client.authentication.k8s.io/v1",)"
                          R"("kind":"ExecCredential",)"
                          R"("status":{"token":"from-plugin"}})",
                          0);
  RunCredentialPlugin(&c);
  EXPECT_EQ(c.token, "from-plugin");
  EXPECT_FALSE(c.has_exec) << "run once";

  const auto error = [&](const std::string& command) {
    KubeConfig bad;
    bad.has_exec = true;
    bad.exec.command = command;
    try {
      RunCredentialPlugin(&bad, 5);
    } catch (const std::exception& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(error((dir_ / "missing").string()), HasSubstr("not found"));
  EXPECT_THAT(error(Plugin(dir_, "denied", 3)), HasSubstr("exit status 3"));
  EXPECT_THAT(error(Plugin(dir_, "{}", 0)), HasSubstr("not an ExecCredential"));
}

TEST(ExecCredentialTest, TakesATokenOrAClientCertificate) {
  KubeConfig c;
  ReadExecCredential(R"({"kind":"ExecCredential","status":{)"
                     R"("clientCertificateData":"C","clientKeyData":"K"}})",
                     &c);
  EXPECT_EQ(c.client_cert_pem, "C");
  EXPECT_EQ(c.client_key_pem, "K");
  for (const char* bad :
       {"", "[]", R"({"kind":"ExecCredential"})",
        R"({"kind":"ExecCredential","status":{}})",
        R"({"kind":"ExecCredential","status":{"clientKeyData":"K"}})"}) {
    EXPECT_THROW(ReadExecCredential(bad, &c), std::runtime_error) << bad;
  }
}

TEST_F(KubeConfigTest, NamesWhatIsMissingOrWrong) {
  const std::string server = "    server: https://127.0.0.1:6443";
  EXPECT_THAT(Error(Config(server, "    {}")),
              HasSubstr("users[admin].user: no credentials"));
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
}  // namespace trainscope::kube
