#include "cli/kube_proxy.h"

#include <algorithm>
#include <stdexcept>

#include "cli/http_fetch.h"
#include "kube/kubeconfig.h"

namespace trainscope::cli {
namespace {

// The agent's port when its pod names none (daemonset/base).
constexpr int kDefaultAgentPort = 9476;

std::string Text(const nlohmann::json& object, const char* key) {
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

const nlohmann::json& Member(const nlohmann::json& object, const char* key) {
  static const nlohmann::json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

// The agent container's port: named metrics (the base), or https (a TLS
// web config, or kube-rbac-proxy in front of the agent).
void ReadAgentPort(const nlohmann::json& spec, AgentPod* agent) {
  agent->port = kDefaultAgentPort;
  const nlohmann::json& containers = Member(spec, "containers");
  if (!containers.is_array()) return;
  for (const auto& container : containers) {
    const nlohmann::json& ports = Member(container, "ports");
    if (!ports.is_array()) continue;
    for (const auto& port : ports) {
      const std::string name = Text(port, "name");
      const auto number = Member(port, "containerPort");
      if ((name == "metrics" || name == "https") &&
          number.is_number_integer()) {
        agent->port = number.get<int>();
        agent->https = name == "https";
        return;
      }
    }
  }
}

AgentPod ReadAgentPod(const nlohmann::json& pod) {
  AgentPod agent;
  agent.name = Text(Member(pod, "metadata"), "name");
  agent.node = Text(Member(pod, "spec"), "nodeName");
  agent.phase = Text(Member(pod, "status"), "phase");
  ReadAgentPort(Member(pod, "spec"), &agent);
  return agent;
}

std::string NodeList(const std::vector<AgentPod>& agents) {
  std::vector<std::string> nodes;
  for (const AgentPod& a : agents) nodes.push_back(a.node);
  std::sort(nodes.begin(), nodes.end());
  std::string out;
  for (size_t i = 0; i < nodes.size() && i < 20; ++i)
    out += (i ? ", " : "") + nodes[i];
  if (nodes.size() > 20)
    out += " and " + std::to_string(nodes.size() - 20) + " more";
  return out;
}

}  // namespace

CLI::Option* AddKubeProxyFlags(CLI::App& app, KubeProxyFlags* flags) {
  auto* kubeconfig = app.add_option(
      "--kubeconfig", flags->kubeconfig,
      "Reach the agent through this kubeconfig's API server (the pod proxy) "
      "with its credentials, when pod IPs are not reachable from here");
  app.add_option("--agent-namespace", flags->agent_namespace,
                 "With --kubeconfig: the namespace of the agents' pods")
      ->default_str(flags->agent_namespace);
  app.add_option("--agent-selector", flags->agent_selector,
                 "With --kubeconfig: the label selector of the agents' pods")
      ->default_str(flags->agent_selector);
  return kubeconfig;
}

bool IsKubeName(const std::string& name) {
  return !name.empty() && name.size() <= 253 &&
         std::all_of(name.begin(), name.end(),
                     [](char c) {
                       return (c >= 'a' && c <= 'z') ||
                              (c >= '0' && c <= '9') || c == '-' || c == '.';
                     }) &&
         name.front() != '-' && name.front() != '.';
}

Status KubeAccess::Open(const KubeProxyFlags& flags, const HttpLimits& limits,
                        KubeAccess* out) {
  if (!IsKubeName(flags.agent_namespace))
    return Status::Error("--agent-namespace '" + flags.agent_namespace +
                         "' is not a Kubernetes name");
  kube::KubeConfig config;
  try {
    config = kube::LoadKubeConfig(flags.kubeconfig);
    kube::RunCredentialPlugin(&config);
  } catch (const std::exception& e) {
    return Status::Error("--kubeconfig " + flags.kubeconfig + ": " + e.what());
  }
  HttpTarget api;
  if (Status s = ParseHttpUrl(config.server, &api); !s.ok())
    return Status::Error("--kubeconfig " + flags.kubeconfig +
                         ": server: " + s.message());
  api.limits = limits;
  api.ca_file = config.ca_file;
  api.ca_pem = config.ca_pem;
  api.client_cert_pem = config.client_cert_pem;
  api.client_key_pem = config.client_key_pem;
  if (!config.token.empty())
    api.headers.emplace_back("Authorization", "Bearer " + config.token);
  if (Status s = CheckTlsMaterial(api); !s.ok())
    return Status::Error("--kubeconfig " + flags.kubeconfig + ": " +
                         s.message());
  out->flags_ = flags;
  out->api_ = std::move(api);
  return Status::Ok();
}

Status KubeAccess::NodeOfPod(const std::string& pod_namespace,
                             const std::string& pod_name,
                             std::string* node) const {
  if (!IsKubeName(pod_namespace) || !IsKubeName(pod_name))
    return Status::Error("'" + pod_namespace + "/" + pod_name +
                         "' is not a Kubernetes NAMESPACE/POD");
  nlohmann::json pod;
  if (Status s = GetJson(
          api_, "/api/v1/namespaces/" + pod_namespace + "/pods/" + pod_name, {},
          &pod);
      !s.ok()) {
    return Status::Error("cannot find pod " + pod_namespace + "/" + pod_name +
                         ": " + s.message());
  }
  *node = Text(Member(pod, "spec"), "nodeName");
  if (node->empty())
    return Status::Error("pod " + pod_namespace + "/" + pod_name +
                         " is not scheduled to a node yet");
  return Status::Ok();
}

Status KubeAccess::ListAgents(const std::string& node,
                              std::vector<AgentPod>* agents) const {
  std::multimap<std::string, std::string> query{
      {"labelSelector", flags_.agent_selector}};
  if (!node.empty()) query.emplace("fieldSelector", "spec.nodeName=" + node);
  nlohmann::json list;
  if (Status s = GetJson(
          api_, "/api/v1/namespaces/" + flags_.agent_namespace + "/pods", query,
          &list);
      !s.ok()) {
    return Status::Error("cannot list the agents' pods: " + s.message());
  }
  const nlohmann::json& items = Member(list, "items");
  if (!items.is_array()) return Status::Error("the pod list has no items");
  for (const auto& pod : items) agents->push_back(ReadAgentPod(pod));
  return Status::Ok();
}

HttpTarget KubeAccess::ProxyTo(const AgentPod& agent) const {
  HttpTarget target = api_;
  target.base_path += "/api/v1/namespaces/" + flags_.agent_namespace +
                      "/pods/" + (agent.https ? "https:" : "") + agent.name +
                      ":" + std::to_string(agent.port) + "/proxy";
  return target;
}

Status KubeAccess::AgentOnNode(const std::string& node, HttpTarget* out,
                               AgentPod* agent) const {
  if (!IsKubeName(node))
    return Status::Error("'" + node + "' is not a Kubernetes node name");
  std::vector<AgentPod> agents;
  if (Status s = ListAgents(node, &agents); !s.ok()) return s;
  const auto running =
      std::find_if(agents.begin(), agents.end(),
                   [](const AgentPod& a) { return a.phase == "Running"; });
  if (running == agents.end()) {
    if (!agents.empty())
      return Status::Error("the agent on node " + node + " (" +
                           agents.front().name + ") is " +
                           agents.front().phase + ", not Running");
    std::vector<AgentPod> all;
    const std::string where = "namespace " + flags_.agent_namespace +
                              ", selector " + flags_.agent_selector;
    if (ListAgents("", &all).ok() && !all.empty())
      return Status::Error("no agent on node " + node + " (" + where +
                           "); agents run on: " + NodeList(all));
    return Status::Error("no agent pod found (" + where +
                         "; see --agent-namespace, --agent-selector)");
  }
  *agent = *running;
  *out = ProxyTo(*running);
  return Status::Ok();
}

Status AgentThroughApiServer(const KubeProxyFlags& flags,
                             const HttpLimits& limits,
                             const AgentLocation& where, HttpTarget* out,
                             AgentPod* agent, bool* usage_error) {
  *usage_error = true;
  KubeAccess kube;
  if (Status s = KubeAccess::Open(flags, limits, &kube); !s.ok()) return s;
  *usage_error = false;
  std::string node = where.node;
  if (node.empty()) {
    if (Status s = kube.NodeOfPod(where.pod_namespace, where.pod_name, &node);
        !s.ok())
      return s;
  }
  return kube.AgentOnNode(node, out, agent);
}

std::string ExplainProxyError(const std::string& message) {
  // The API server's own 401 (an expired token) is a Status object; the
  // agent's or kube-rbac-proxy's is not.
  if (message.find("HTTP 401") != std::string::npos &&
      message.find("\"kind\":\"Status\"") == std::string::npos)
    return message +
           "\n  The agent asked for its own credentials (kube-rbac-proxy, or a "
           "web config with users). The API server's pod proxy does not pass "
           "yours on; use `kubectl port-forward` and --agent instead "
           "(docs/deploy.md, \"Reaching the agents\").";
  if (message.find("HTTP 403") != std::string::npos &&
      message.find("pods/proxy") != std::string::npos)
    return message +
           "\n  Your user needs `get` on pods/proxy in the agents' namespace "
           "(the ClusterRole trainscope-cli, docs/deploy.md, \"Reaching the "
           "agents\").";
  return message;
}

}  // namespace trainscope::cli
