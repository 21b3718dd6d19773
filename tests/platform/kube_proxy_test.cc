// `trainscope report|profile --kubeconfig` against a real kube-apiserver
// (issue 36; docs/deploy.md, "Reaching the agents"): the CLI finds the
// agent pod of a node (or of a profiled pod's node) and reaches it through
// the API server's pod proxy with the kubeconfig's credentials: a token
// with the CA as a file, a client certificate with the CA inline. The
// agents are real trainscope-agent processes listening on 198.18.x.y, on a
// veth link this test makes (the API server refuses to proxy to
// loopback addresses) and removes, also when it fails. The shipped Role
// (components/cli-access) is what a user needs; without `pods/proxy` the
// API server's 403 comes back with the rule to ask for; an agent that asks
// for its own credentials answers 401, because the API server drops the
// caller's Authorization header before proxying.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agent_process.h"
#include "platform_agent.h"
#include "prometheus_support.h"
#include "test_platform.h"
#include "test_wait.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

std::string Shell(const std::string& command, int* rc) {
  const CommandResult r = RunCommand({"/bin/sh", "-c", command}, 30s);
  *rc = r.exit_code;
  return r.out + r.err;
}

// A link holding /32 addresses in 198.18.0.0/15 (RFC 2544 test
// space, no route off the machine); removed by the destructor.
class LocalAddresses {
 public:
  explicit LocalAddresses(const std::vector<std::string>& ips)
      : link_("tsproxy" + std::to_string(::getpid() % 100000)) {
    int rc = 0;
    // A veth pair, since the dummy driver is not in every kernel: the
    // addresses live on one end, both ends up; traffic to them stays on
    // this host (the kernel delivers to its own addresses over lo).
    std::string command = "ip link add " + link_ + " type veth peer name " +
                          link_ + "p && ip link set " + link_ +
                          " up && ip link set " + link_ + "p up";
    for (const auto& ip : ips)
      command += " && ip addr add " + ip + "/32 dev " + link_;
    error_ = Shell(command, &rc);
    ok_ = rc == 0;
  }
  ~LocalAddresses() {
    int rc = 0;
    Shell("ip link del " + link_, &rc);
  }
  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

 private:
  std::string link_;
  bool ok_ = false;
  std::string error_;
};

// An agent pod as the kubelet would have it: bound to `node`, Running, with
// `ip` as its pod IP and the agent's named port.
nlohmann::json AgentPodObject(const std::string& name, const std::string& node,
                              int port) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "trainscope"},
        {"labels", {{"app.kubernetes.io/name", "trainscope-agent"}}}}},
      {"spec",
       {{"nodeName", node},
        {"containers",
         {{{"name", "agent"},
           {"image", "ghcr.io/trainscope/trainscope-agent:0.1.0"},
           {"ports", {{{"name", "metrics"}, {"containerPort", port}}}}}}}}}};
}

// Per process (ctest runs each test in its own), so that tests running
// side by side never share an address.
std::string TestIp(int host) {
  return "198.18." + std::to_string(7 + ::getpid() % 200) + "." +
         std::to_string(host);
}
const std::string kIpA = TestIp(1);
const std::string kIpB = TestIp(2);

class KubeProxyTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    platform_ = new TestPlatform();
    addresses_ = new LocalAddresses({kIpA, kIpB});
  }
  static void TearDownTestSuite() {
    delete agent_a_;
    delete agent_b_;
    delete addresses_;
    delete platform_;
    agent_a_ = agent_b_ = nullptr;
  }

  void SetUp() override {
    ASSERT_TRUE(platform_->ok()) << platform_->error();
    ASSERT_TRUE(addresses_->ok()) << addresses_->error();
    if (agent_a_ == nullptr) StartCluster();
  }

  // node-a: an open agent; node-b: one whose web config wants a bearer
  // token. Both discover training pods from the API server.
  void StartCluster() {
    int rc = 0;
    std::string out = platform_->Kubectl("create namespace trainscope", &rc) +
                      platform_->Kubectl("create namespace training", &rc);
    ASSERT_EQ(rc, 0) << out;
    port_ = FreePort();
    out = platform_->Apply(
        KubeList({TrainingPod("real-ps-0", "node-a", "ps", 0),
                  TrainingPod("real-worker-0", "node-a", "worker", 0),
                  AgentPodObject("trainscope-agent-aaaaa", "node-a", port_),
                  AgentPodObject("trainscope-agent-bbbbb", "node-b", port_)})
            .dump(),
        &rc);
    ASSERT_EQ(rc, 0) << out;
    const std::vector<std::pair<std::string, std::string>> agent_ips = {
        {"trainscope-agent-aaaaa", kIpA}, {"trainscope-agent-bbbbb", kIpB}};
    for (const auto& [pod, ip] : agent_ips) {
      out = platform_->Kubectl(
          "-n trainscope patch pod " + pod +
              " --subresource status --type merge -p "
              "'{\"status\":{\"phase\":\"Running\",\"podIP\":\"" +
              ip + "\",\"podIPs\":[{\"ip\":\"" + ip + "\"}]}}'",
          &rc);
      ASSERT_EQ(rc, 0) << out;
    }
    const fs::path dir = platform_->dir();
    std::ofstream(dir / "agent-b.token") << "agent-b-secret\n";
    std::ofstream(dir / "web-b.yml")
        << "authorization:\n  type: Bearer\n  credentials_file: "
        << (dir / "agent-b.token").string() << "\n";
    agent_a_ = new AgentProcess(Args("node-a", kIpA, {}));
    agent_b_ = new AgentProcess(Args(
        "node-b", kIpB, {"--web-config-file", (dir / "web-b.yml").string()}));
    ASSERT_TRUE(WaitUntil(
        [&] {
          return RunCommand({"/usr/bin/curl", "-sf", "--noproxy", "*",
                             std::string("http://") + kIpA + ":" +
                                 std::to_string(port_) + "/readyz"},
                            5s)
                     .exit_code == 0;
        },
        20s))
        << agent_a_->Stderr();
  }

  std::vector<std::string> Args(const std::string& node, const std::string& ip,
                                std::vector<std::string> extra) {
    auto args = PlatformAgentArgs(*platform_, platform_->admin_token_file(),
                                  port_, std::move(extra));
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == "--listen") args[i + 1] = ip + ":" + std::to_string(port_);
      if (args[i] == "--node-name") args[i + 1] = node;
    }
    return args;
  }

  // A kubeconfig for user `user` with a client certificate signed by the
  // API server's client CA, everything inline (as kind writes them).
  std::string CertificateKubeconfig(const std::string& user) {
    const fs::path dir = platform_->dir();
    const fs::path pki = dir / "pki";
    int rc = 0;
    const std::string out = Shell(
        "cd " + dir.string() +
            " && openssl req -newkey rsa:2048 -nodes -subj '/CN=" + user +
            "' -keyout " + user + ".key -out " + user +
            ".csr 2>/dev/null && openssl x509 -req -in " + user + ".csr -CA " +
            (pki / "ca.crt").string() + " -CAkey " + (pki / "ca.key").string() +
            " -CAcreateserial -days 1 -out " + user + ".crt 2>/dev/null",
        &rc);
    EXPECT_EQ(rc, 0) << out;
    const auto b64 = [](const fs::path& file) {
      int b64_rc = 0;
      return Shell("base64 -w0 " + file.string(), &b64_rc);
    };
    const fs::path file = dir / (user + ".kubeconfig");
    std::ofstream(file) << "apiVersion: v1\nkind: Config\n"
                           "current-context: c\nclusters:\n- name: k\n"
                           "  cluster:\n    server: "
                        << platform_->url()
                        << "\n    certificate-authority-data: "
                        << b64(pki / "ca.crt")
                        << "\nusers:\n- name: u\n  user:\n"
                           "    client-certificate-data: "
                        << b64(dir / (user + ".crt"))
                        << "\n    client-key-data: "
                        << b64(dir / (user + ".key"))
                        << "\ncontexts:\n- name: c\n  context: {cluster: k, "
                           "user: u}\n";
    return file.string();
  }

  // The shipped Role, bound to `user` in the agents' namespace.
  void GrantCliAccess(const std::string& user) {
    int rc = 0;
    std::string out = platform_->Kubectl(
        "-n trainscope apply -f " + std::string(TRAINSCOPE_SOURCE_DIR) +
            "/daemonset/components/cli-access/role.yaml",
        &rc);
    ASSERT_EQ(rc, 0) << out;
    out = platform_->Kubectl("-n trainscope create rolebinding cli-" + user +
                                 " --role trainscope-cli --user " + user,
                             &rc);
    ASSERT_EQ(rc, 0) << out;
  }

  static CommandResult Cli(std::vector<std::string> args) {
    args.insert(args.begin(), TRAINSCOPE_CLI_BIN);
    return RunCommand(args, 60s);
  }

  static TestPlatform* platform_;
  static LocalAddresses* addresses_;
  static AgentProcess* agent_a_;
  static AgentProcess* agent_b_;
  static int port_;
};

TestPlatform* KubeProxyTest::platform_ = nullptr;
LocalAddresses* KubeProxyTest::addresses_ = nullptr;
AgentProcess* KubeProxyTest::agent_a_ = nullptr;
AgentProcess* KubeProxyTest::agent_b_ = nullptr;
int KubeProxyTest::port_ = 0;

// A user with only the shipped Role, by client certificate: node-a's
// agent's own report, through the API server.
TEST_F(KubeProxyTest, ReportsANodesAgentThroughThePodProxy) {
  GrantCliAccess("alice");
  const std::string kubeconfig = CertificateKubeconfig("alice");
  nlohmann::json report;
  ASSERT_TRUE(WaitUntil(
      [&] {
        const CommandResult r = Cli({"report", "--kubeconfig", kubeconfig,
                                     "--node", "node-a", "--json"});
        report = nlohmann::json::parse(r.out, nullptr, false);
        return r.exit_code == 0 && report.is_object() &&
               report.value("node", "") == "node-a";
      },
      30s))
      << Cli({"report", "--kubeconfig", kubeconfig, "--node", "node-a"}).err;
  EXPECT_TRUE(report["diagnoses"].is_array());
  ASSERT_TRUE(report["jobs"].is_array());
  ASSERT_FALSE(report["jobs"].empty()) << report.dump();
  EXPECT_EQ(report["jobs"][0].value("training_job", ""), "real");
}

// profile finds the pod's node through the API server (the admin's token
// kubeconfig, CA by file) and asks that node's agent, whose answer (the
// profiler is off in these agents) comes back through the proxy.
TEST_F(KubeProxyTest, ProfileAsksTheAgentOnThePodsNode) {
  const CommandResult r =
      Cli({"profile", "--kubeconfig", platform_->kubeconfig(), "--pod",
           "training/real-ps-0", "--seconds", "1", "-o", "/dev/null"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("the agent answered HTTP"));
  EXPECT_THAT(r.err, HasSubstr("the profiler is off on this node"));
  const CommandResult missing =
      Cli({"profile", "--kubeconfig", platform_->kubeconfig(), "--pod",
           "training/nowhere", "--seconds", "1"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("cannot find pod training/nowhere"));
  EXPECT_THAT(missing.err, HasSubstr("HTTP 404"));
}

TEST_F(KubeProxyTest, NamesTheNodesThatHaveAnAgent) {
  const CommandResult r = Cli(
      {"report", "--kubeconfig", platform_->kubeconfig(), "--node", "node-x"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("no agent on node node-x"));
  EXPECT_THAT(r.err, HasSubstr("agents run on: node-a, node-b"));
  const CommandResult usage =
      Cli({"report", "--kubeconfig", platform_->kubeconfig()});
  EXPECT_EQ(usage.exit_code, 2);
  EXPECT_THAT(usage.err, HasSubstr("--kubeconfig needs --node NODE"));
}

// Listing the agents is not enough: the 403 names pods/proxy and the CLI
// says which Role grants it.
TEST_F(KubeProxyTest, WithoutPodsProxyTheForbiddenRuleIsNamed) {
  int rc = 0;
  std::string out = platform_->Kubectl(
      "-n trainscope create role list-only --verb list --resource pods", &rc);
  ASSERT_EQ(rc, 0) << out;
  out = platform_->Kubectl(
      "-n trainscope create rolebinding bob --role list-only --user bob", &rc);
  ASSERT_EQ(rc, 0) << out;
  const CommandResult r =
      Cli({"report", "--kubeconfig", CertificateKubeconfig("bob"), "--node",
           "node-a"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("HTTP 403"));
  EXPECT_THAT(r.err, HasSubstr("pods/proxy"));
  EXPECT_THAT(r.err, HasSubstr("trainscope-cli"));
}

// node-b's agent wants a bearer token; the API server authenticated the
// admin and dropped the header, so the agent sees none.
TEST_F(KubeProxyTest, AnAgentThatAsksForCredentialsIsExplained) {
  const CommandResult r = Cli(
      {"report", "--kubeconfig", platform_->kubeconfig(), "--node", "node-b"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("HTTP 401"));
  EXPECT_THAT(r.err, HasSubstr("does not pass yours on"));
  EXPECT_THAT(r.err, HasSubstr("port-forward"));
}

TEST_F(KubeProxyTest, AKubeconfigItCannotUseIsAUsageError) {
  const fs::path bad = platform_->dir() / "bad.kubeconfig";
  std::ofstream(bad) << "apiVersion: v1\nkind: Config\ncurrent-context: c\n";
  const CommandResult r =
      Cli({"report", "--kubeconfig", bad.string(), "--node", "node-a"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--kubeconfig " + bad.string()));
  EXPECT_THAT(r.err, HasSubstr("contexts"));
}

}  // namespace
}  // namespace trainscope::testing
