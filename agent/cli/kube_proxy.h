#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "cli/report_http.h"
#include "trainscope/status.h"

namespace trainscope::cli {

// --kubeconfig and where the agents run: how `report` and `profile` reach
// an agent through the API server's pod proxy
// (/api/v1/namespaces/NS/pods/POD:PORT/proxy/...), with the user's own
// credentials, when the CLI has no route to pod IPs. docs/deploy.md,
// "Reaching the agents".
struct KubeProxyFlags {
  std::string kubeconfig;
  std::string agent_namespace = "trainscope";
  std::string agent_selector = "app.kubernetes.io/name=trainscope-agent";
};

// Adds --kubeconfig, --agent-namespace and --agent-selector; returns the
// --kubeconfig option (for excludes()).
CLI::Option* AddKubeProxyFlags(CLI::App& app, KubeProxyFlags* flags);

// One agent pod as the API server lists it.
struct AgentPod {
  std::string name;
  std::string node;
  std::string phase;
  int port = 0;        // the agent container's port (named metrics or https)
  bool https = false;  // the port is named https (TLS web config, proxy)
};

// The API server of a kubeconfig, with its credentials (a token, a client
// certificate or an exec plugin's answer, run once).
class KubeAccess {
 public:
  // Reads the kubeconfig and runs its credential plugin; an error here is
  // the user's to fix (exit 2).
  static Status Open(const KubeProxyFlags& flags, const HttpLimits& limits,
                     KubeAccess* out);

  // The node a pod is bound to.
  Status NodeOfPod(const std::string& pod_namespace,
                   const std::string& pod_name, std::string* node) const;
  // The agent pods, or those of one node ("" = all).
  Status ListAgents(const std::string& node,
                    std::vector<AgentPod>* agents) const;
  // An HttpTarget whose paths go to `agent` through the pod proxy.
  HttpTarget ProxyTo(const AgentPod& agent) const;
  // The agent on `node`, through the pod proxy; the error lists the nodes
  // that have one when `node` has none.
  Status AgentOnNode(const std::string& node, HttpTarget* out,
                     AgentPod* agent) const;

 private:
  KubeProxyFlags flags_;
  HttpTarget api_;
};

// Which agent: the one on `node`, or on the node of pod
// `pod_namespace`/`pod_name` when `node` is empty.
struct AgentLocation {
  std::string node;
  std::string pod_namespace;
  std::string pod_name;
};

// Opens the kubeconfig and finds the agent at `where`: `out` then reaches
// it through the pod proxy. On an error `usage_error` says whether the
// user's input was unusable (a kubeconfig, exit 2) rather than the
// cluster's answer (exit 1).
Status AgentThroughApiServer(const KubeProxyFlags& flags,
                             const HttpLimits& limits,
                             const AgentLocation& where, HttpTarget* out,
                             AgentPod* agent, bool* usage_error);

// A failed request through the pod proxy, explained: a 401 is the agent's
// own authentication (kube-rbac-proxy, a web config with users), which the
// API server does not forward credentials to; a 403 from the API server
// names the RBAC rule the user lacks.
std::string ExplainProxyError(const std::string& message);

// A DNS-1123 name as Kubernetes allows for namespaces, pods and nodes
// (lower-case alphanumerics, '-' and '.'; at most 253 characters).
bool IsKubeName(const std::string& name);

}  // namespace trainscope::cli
