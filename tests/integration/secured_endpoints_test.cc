// Secured endpoints end to end (issue 16): the real agent with
// --web-config-file (TLS, basic auth, bearer token), a real Prometheus
// (Debian's) that scrapes it over https with basic auth and itself requires
// TLS + basic auth, and `trainscope report` reaching both with --ca-file,
// --header, --bearer-token-file and --selector.
#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent_process.h"
#include "child_process.h"
#include "prometheus_support.h"
#include "tls_files.h"
#include "trainscope/unique_fd.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using testing::Base64;
using ::testing::HasSubstr;
using ::testing::Not;

// A child process (Prometheus) stopped by the destructor, also on failure.
class Child {
 public:
  Child(std::vector<std::string> argv, const fs::path& log) {
    pid_ = trainscope::testing::ForkTiedToParent();
    if (pid_ == 0) {
      FILE* out = std::freopen(log.c_str(), "w", stderr);
      (void)out;
      ::dup2(STDERR_FILENO, STDOUT_FILENO);
      std::vector<char*> args;
      for (auto& a : argv) args.push_back(a.data());
      args.push_back(nullptr);
      ::execv(args[0], args.data());
      ::_exit(127);
    }
  }
  ~Child() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 100; ++i) {
      if (::waitpid(pid_, nullptr, WNOHANG) == pid_) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }

 private:
  pid_t pid_ = -1;
};

class SecuredEndpointsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string error;
    ASSERT_TRUE(MakeTlsFiles((dir_.path() / "tls").string(), &tls_, &error))
        << error;
    token_file_ = (dir_.path() / "token").string();
    ASSERT_TRUE(WriteFile(token_file_, "scrape-token-123\n"));
    web_config_ = (dir_.path() / "web.yml").string();
    ASSERT_TRUE(WriteFile(web_config_,
                          "tls_server_config:\n"
                          "  cert_file: tls/server.crt\n"
                          "  key_file: tls/server.key\n"
                          "basic_auth_users:\n"
                          "  prometheus: " +
                              BcryptHash("s3cret") +
                              "\n"
                              "authorization:\n"
                              "  type: Bearer\n"
                              "  credentials_file: token\n"));
    port_ = FreePort();
  }

  std::vector<std::string> AgentArgs(const std::string& listen) const {
    return FixtureHostArgs(listen, {"--web-config-file", web_config_});
  }

  std::unique_ptr<httplib::SSLClient> Https(int port) const {
    auto client = std::make_unique<httplib::SSLClient>("127.0.0.1", port);
    client->set_ca_cert_path(tls_.ca_cert.c_str());
    client->enable_server_certificate_verification(true);
    client->set_connection_timeout(5);
    client->set_read_timeout(10);
    return client;
  }

  bool WaitHttps(int port, const std::string& path,
                 std::chrono::seconds deadline) const {
    auto end = std::chrono::steady_clock::now() + deadline;
    while (std::chrono::steady_clock::now() < end) {
      auto res = Https(port)->Get(path);
      if (res && res->status == 200) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }

  CommandResult Cli(std::vector<std::string> args) const {
    args.insert(args.begin(), {TRAINSCOPE_CLI_BIN, "report"});
    return RunCommand(args, std::chrono::seconds(60));
  }

  TempDir dir_;
  TlsFiles tls_;
  std::string token_file_;
  std::string web_config_;
  int port_ = 0;
};

TEST_F(SecuredEndpointsTest, AgentNeedsCredentialsOverHttps) {
  AgentProcess agent(AgentArgs("127.0.0.1:" + std::to_string(port_)));
  ASSERT_TRUE(WaitHttps(port_, "/readyz", std::chrono::seconds(15)))
      << agent.Stderr();

  auto anonymous = Https(port_)->Get("/metrics");
  ASSERT_TRUE(anonymous) << httplib::to_string(anonymous.error());
  EXPECT_EQ(anonymous->status, 401);
  EXPECT_THAT(anonymous->get_header_value("WWW-Authenticate"),
              HasSubstr("Basic"));
  auto wrong = Https(port_);
  wrong->set_basic_auth("prometheus", "S3cret");
  EXPECT_EQ(wrong->Get("/metrics")->status, 401);
  EXPECT_EQ(wrong->Get("/api/v1/pods")->status, 401);
  wrong->set_bearer_token_auth("scrape-token-12");
  EXPECT_EQ(wrong->Get("/api/v1/report")->status, 401);

  auto basic = Https(port_);
  basic->set_basic_auth("prometheus", "s3cret");
  auto metrics = basic->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->body, HasSubstr("trainscope_node_cpus{"));
  EXPECT_THAT(metrics->body,
              HasSubstr("trainscope_http_unauthorized_requests_total 4"));
  auto bearer = Https(port_);
  bearer->set_bearer_token_auth("scrape-token-123");
  auto pods = bearer->Get("/api/v1/pods");
  ASSERT_TRUE(pods);
  EXPECT_EQ(pods->status, 200);
  EXPECT_THAT(pods->body, HasSubstr("ctr-worker-0"));
  EXPECT_EQ(Https(port_)->Get("/healthz")->status, 200);  // probes stay open
}

TEST_F(SecuredEndpointsTest, PlainHttpToTheTlsPortFailsCleanly) {
  AgentProcess agent(AgentArgs("127.0.0.1:" + std::to_string(port_)));
  ASSERT_TRUE(WaitHttps(port_, "/healthz", std::chrono::seconds(15)))
      << agent.Stderr();
  int status = 0;
  auto plain = HttpGet(port_, "/healthz", &status);
  EXPECT_TRUE(!plain || status != 200) << status;
  // The agent lives on and still answers https.
  EXPECT_EQ(Https(port_)->Get("/healthz")->status, 200);
  EXPECT_EQ(::kill(agent.pid(), 0), 0);
}

// --listen 127.0.0.1:PORT (what a kube-rbac-proxy sidecar needs): nothing
// answers on another address of the host, even another loopback one.
TEST_F(SecuredEndpointsTest, ListenAddressBindsOnlyThatAddress) {
  AgentProcess agent(AgentArgs("127.0.0.1:" + std::to_string(port_)));
  ASSERT_TRUE(WaitHttps(port_, "/healthz", std::chrono::seconds(15)))
      << agent.Stderr();
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM, 0));
  sockaddr_in other{};
  other.sin_family = AF_INET;
  other.sin_port = htons(static_cast<uint16_t>(port_));
  ASSERT_EQ(::inet_pton(AF_INET, "127.0.0.2", &other.sin_addr), 1);
  EXPECT_NE(
      ::connect(fd.get(), reinterpret_cast<sockaddr*>(&other), sizeof other),
      0);
}

TEST_F(SecuredEndpointsTest, CliReachesTheSecuredAgent) {
  AgentProcess agent(AgentArgs("127.0.0.1:" + std::to_string(port_)));
  ASSERT_TRUE(WaitHttps(port_, "/readyz", std::chrono::seconds(15)))
      << agent.Stderr();
  const std::string url = "https://127.0.0.1:" + std::to_string(port_);

  auto bearer = Cli({"--agent", url, "--ca-file", tls_.ca_cert,
                     "--bearer-token-file", token_file_, "--json"});
  EXPECT_EQ(bearer.exit_code, 0) << bearer.err;
  EXPECT_THAT(bearer.out, HasSubstr("\"diagnoses\""));

  auto header =
      Cli({"--agent", url, "--ca-file", tls_.ca_cert, "--header",
           "Authorization: Basic " + Base64("prometheus:s3cret"), "--json"});
  EXPECT_EQ(header.exit_code, 0) << header.err;

  auto no_token = Cli({"--agent", url, "--ca-file", tls_.ca_cert});
  EXPECT_EQ(no_token.exit_code, 1);
  EXPECT_THAT(no_token.err, HasSubstr("answered HTTP 401"));

  auto no_ca =
      Cli({"--agent", url, "--bearer-token-file", token_file_});  // system CAs
  EXPECT_EQ(no_ca.exit_code, 1);
  EXPECT_THAT(no_ca.err, HasSubstr("--ca-file"));

  auto bad_header = Cli({"--agent", url, "--header", "NoColonHere"});
  EXPECT_EQ(bad_header.exit_code, 2);
  EXPECT_THAT(bad_header.err, HasSubstr("--header 'NoColonHere'"));
}

struct BadWebConfig {
  const char* name;
  std::string yaml;
  const char* message;
};

TEST_F(SecuredEndpointsTest, BadWebConfigStopsTheAgentNamingTheField) {
  const std::vector<BadWebConfig> cases = {
      {"missing_key", "tls_server_config:\n  cert_file: tls/server.crt\n",
       "tls_server_config.key_file: missing"},
      {"plain_password", "basic_auth_users:\n  prometheus: s3cret\n",
       "basic_auth_users.prometheus: not a bcrypt hash"},
      {"typo", "tls_server_confg:\n  cert_file: x\n",
       "tls_server_confg: unknown field"},
      {"wrong_key",
       "tls_server_config:\n  cert_file: tls/server.crt\n  key_file: "
       "tls/client.key\n",
       "tls_server_config.cert_file"},
  };
  for (const auto& c : cases) {
    ASSERT_TRUE(WriteFile(web_config_, c.yaml));
    AgentProcess agent(AgentArgs("127.0.0.1:0"));
    auto code = agent.WaitExit(std::chrono::seconds(10));
    ASSERT_TRUE(code.has_value()) << c.name << ": agent did not exit";
    EXPECT_EQ(*code, 2) << c.name << ": " << agent.Stderr();
    EXPECT_THAT(agent.Stderr(), HasSubstr("--web-config-file " + web_config_))
        << c.name;
    EXPECT_THAT(agent.Stderr(), HasSubstr(c.message)) << c.name;
  }
  AgentProcess missing(
      {"--listen", "127.0.0.1:0", "--web-config-file", "/nonexistent/web.yml"});
  auto code = missing.WaitExit(std::chrono::seconds(10));
  ASSERT_TRUE(code.has_value());
  EXPECT_EQ(*code, 2);
  EXPECT_THAT(missing.Stderr(), HasSubstr("/nonexistent/web.yml: cannot read"));
}

// A real Prometheus scrapes the agent over https with basic auth (its
// tls_config and basic_auth), labels the target cluster="a", and itself
// serves only https with basic auth (--web.config.file). The cluster view
// reaches it with --ca-file and --header, and --selector picks the cluster.
TEST_F(SecuredEndpointsTest, ClusterViewThroughASecuredPrometheus) {
  AgentProcess agent(AgentArgs("127.0.0.1:" + std::to_string(port_)));
  ASSERT_TRUE(WaitHttps(port_, "/readyz", std::chrono::seconds(15)))
      << agent.Stderr();
  const int prom_port = FreePort();
  const fs::path prom_dir = dir_.path() / "prometheus";
  fs::create_directories(prom_dir);
  ASSERT_TRUE(WriteFile(
      (prom_dir / "prometheus.yml").string(),
      "global:\n  scrape_interval: 1s\n"
      "scrape_configs:\n"
      "  - job_name: trainscope-agent\n"
      "    scheme: https\n"
      "    tls_config:\n      ca_file: " +
          tls_.ca_cert +
          "\n"
          "    basic_auth:\n      username: prometheus\n      password: "
          "s3cret\n"
          "    static_configs:\n"
          "      - targets: ['127.0.0.1:" +
          std::to_string(port_) +
          "']\n"
          "        labels:\n          cluster: a\n"));
  ASSERT_TRUE(WriteFile(
      (prom_dir / "web.yml").string(),
      "tls_server_config:\n  cert_file: " + tls_.server_cert +
          "\n  key_file: " + tls_.server_key +
          "\nbasic_auth_users:\n  admin: " + BcryptHash("adm1n") + "\n"));
  Child prometheus(
      {"/usr/bin/prometheus",
       "--config.file=" + (prom_dir / "prometheus.yml").string(),
       "--web.config.file=" + (prom_dir / "web.yml").string(),
       "--storage.tsdb.path=" + (prom_dir / "data").string(),
       "--web.listen-address=127.0.0.1:" + std::to_string(prom_port),
       "--log.level=warn"},
      prom_dir / "prometheus.log");
  auto prom = Https(prom_port);
  prom->set_basic_auth("admin", "adm1n");
  // Scraped a few times over https + basic auth: the series are there.
  bool scraped = false;
  for (int i = 0; i < 200 && !scraped; ++i) {
    auto res = prom->Get(
        "/api/v1/query",
        httplib::Params{{"query",
                         "count_over_time(trainscope_node_cpus{cluster=\"a\"}"
                         "[1m])"}},
        httplib::Headers{});
    if (res && res->status == 200) {
      auto j = nlohmann::json::parse(res->body, nullptr, false);
      const auto& r = j["data"]["result"];
      scraped = r.is_array() && !r.empty() &&
                std::stod(r[0]["value"][1].get<std::string>()) >= 4;
    }
    if (!scraped) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(scraped) << "Prometheus did not scrape the secured agent";

  const std::string url = "https://127.0.0.1:" + std::to_string(prom_port);
  const std::string auth = "Authorization: Basic " + Base64("admin:adm1n");
  std::vector<std::string> base = {"--prometheus", url,       "--ca-file",
                                   tls_.ca_cert,   "--range", "60",
                                   "--step",       "1",       "--json"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return Cli(args);
  };

  auto cluster_a = with({"--header", auth, "--selector", "cluster=\"a\""});
  ASSERT_EQ(cluster_a.exit_code, 0) << cluster_a.err;
  auto report = nlohmann::json::parse(cluster_a.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << cluster_a.out;
  EXPECT_THAT(report["jobs"].dump(), HasSubstr("\"ctr\""));

  auto cluster_b = with({"--header", auth, "--selector", "cluster=\"b\""});
  ASSERT_EQ(cluster_b.exit_code, 0) << cluster_b.err;
  EXPECT_THAT(cluster_b.err, HasSubstr("no trainscope series"));
  EXPECT_THAT(cluster_b.out, Not(HasSubstr("\"ctr\"")));

  auto anonymous = with({"--selector", "cluster=\"a\""});
  EXPECT_EQ(anonymous.exit_code, 1);
  EXPECT_THAT(anonymous.err, HasSubstr("401"));

  auto malformed = with({"--header", auth, "--selector", "cluster=a"});
  EXPECT_EQ(malformed.exit_code, 2);
  EXPECT_THAT(malformed.err, HasSubstr("--selector 'cluster=a'"));
  EXPECT_THAT(malformed.err, HasSubstr("must be quoted"));
}

}  // namespace
}  // namespace trainscope::testing
