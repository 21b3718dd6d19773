#include "agents.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <httplib.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "cgroups.h"
#include "pod_process.h"

namespace trainsim {
namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  if (port == 0) throw std::runtime_error("no free port on 127.0.0.1");
  return port;
}

namespace {

std::string Cgroup2Root() {
  for (const Hierarchy& h : DetectHierarchies())
    if (h.v2) return h.root;
  return "";
}

}  // namespace

std::vector<std::string> AgentArgs(const AgentSettings& s, const Layout& layout,
                                   int k, int port,
                                   const std::string& cgroup2_root) {
  const SimNodeInfo& node = layout.nodes[k];
  std::vector<std::string> args = {s.binary,
                                   "--discovery",
                                   "apiserver",
                                   "--kube-api",
                                   s.api_url,
                                   "--node-name",
                                   node.name,
                                   "--listen",
                                   "127.0.0.1:" + std::to_string(port),
                                   "--interval",
                                   fmt::format("{}", s.interval_s)};
  if (!s.api_ca_file.empty()) args.push_back("--kube-ca-file=" + s.api_ca_file);
  if (!s.api_token_file.empty())
    args.push_back("--kube-token-file=" + s.api_token_file);
  // A node with a slice of its own (every cluster node; a single node whose
  // pods' uids come from a real API server): its eBPF programs count only
  // the pods below it.
  if (!node.cgroup_parent.empty() && !cgroup2_root.empty())
    args.push_back("--cgroup2-path=" + cgroup2_root + "/" + node.cgroup_parent);
  if (layout.cluster()) {
    if (s.node_flags) {
      args.push_back("--node-interfaces=" + node.uplink);
      if (node.nic_mbit > 0)
        args.push_back("--node-link-mbit=" + fmt::format("{}", node.nic_mbit));
    }
    if (!s.peer_namespaces.empty())
      args.push_back("--peer-pods-namespaces=" + s.peer_namespaces);
  }
  args.insert(args.end(), s.extra_args.begin(), s.extra_args.end());
  return args;
}

AgentCapabilities AskAgent(const std::string& binary) {
  const std::string help =
      RunCommand({binary, "--help"}, std::chrono::seconds(30)).output;
  AgentCapabilities c;
  c.node_flags = help.find("--node-interfaces") != std::string::npos;
  c.peer_pods_namespaces =
      help.find("--peer-pods-namespaces") != std::string::npos;
  const char* env = std::getenv("TRAINSIM_AGENT_NODE_FLAGS");
  const std::string mode = env ? env : "auto";
  if (mode == "on" || mode == "1") c.node_flags = true;
  if (mode == "off" || mode == "0") c.node_flags = false;
  return c;
}

std::vector<AgentProcess> StartAgents(const AgentSettings& s,
                                      const Layout& layout) {
  const std::string cgroup2 =
      layout.nodes[0].cgroup_parent.empty() ? "" : Cgroup2Root();
  std::vector<AgentProcess> agents;
  for (size_t k = 0; k < layout.nodes.size(); ++k) {
    AgentProcess a;
    a.node = layout.nodes[k].name;
    a.port =
        s.first_port ? s.first_port + static_cast<int>(k) : FreeLoopbackPort();
    a.log = layout.cluster() ? s.run_dir + "/agent-" + a.node + ".log"
                             : s.run_dir + "/agent.log";
    const auto args =
        AgentArgs(s, layout, static_cast<int>(k), a.port, cgroup2);
    spdlog::debug("[trainsim] agent of {}: {}", a.node, fmt::join(args, " "));
    a.process = Subprocess::Spawn(args, a.log, s.env);
    agents.push_back(std::move(a));
  }
  return agents;
}

bool WaitForAgentsReady(std::vector<AgentProcess>& agents, const Layout& layout,
                        double interval_s, bool* interrupted) {
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  for (AgentProcess& agent : agents) {
    httplib::Client cli("127.0.0.1", agent.port);
    cli.set_connection_timeout(1);
    cli.set_read_timeout(3);
    bool ready = false;
    while (!ready) {
      if (Clock::now() > deadline || !agent.process.Running()) return false;
      if (WaitForStop(200)) {
        *interrupted = true;
        return false;
      }
      auto r = cli.Get("/readyz");
      if (!r || r->status != 200) continue;
      auto pods = cli.Get("/api/v1/pods");
      if (!pods || pods->status != 200) continue;
      ready = std::all_of(
          layout.pods.begin(), layout.pods.end(), [&](const SimPod& p) {
            return layout.NodeOf(p).name != agent.node ||
                   pods->body.find("\"" + p.name + "\"") != std::string::npos;
          });
    }
  }
  const auto settle =
      Clock::now() + std::chrono::milliseconds(
                         static_cast<int64_t>(2 * interval_s * 1000 + 200));
  while (Clock::now() < settle) {
    for (AgentProcess& agent : agents)
      if (!agent.process.Running()) return false;
    if (WaitForStop(100)) {
      *interrupted = true;
      return false;
    }
  }
  return true;
}

}  // namespace trainsim
