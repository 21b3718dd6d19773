#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "discovery/roles.h"
#include "trainscope/enum_names.h"

namespace trainscope {

// --discovery: where the node's pods come from.
enum class DiscoveryMode { kApiServer, kFile, kCgroup };
inline constexpr EnumNameTable<DiscoveryMode, 3> kDiscoveryModeNames{
    {{DiscoveryMode::kApiServer, "apiserver"},
     {DiscoveryMode::kFile, "file"},
     {DiscoveryMode::kCgroup, "cgroup"}}};

// Everything the agent's flags say about pod discovery.
struct DiscoveryConfig {
  DiscoveryMode mode = DiscoveryMode::kApiServer;
  std::string node_name;  // "" = all pods (apiserver mode)
  std::string pod_file;   // file mode
  // apiserver mode: an explicit URL, else in-cluster from
  // KUBERNETES_SERVICE_HOST/PORT and the service-account directory.
  std::string kube_api;
  std::string kube_token_file;  // default in-cluster: <sa dir>/token
  std::string kube_ca_file;     // default in-cluster: <sa dir>/ca.crt
  std::string service_account_dir =
      "/var/run/secrets/kubernetes.io/serviceaccount";
  std::vector<LabelScheme> label_schemes = DefaultLabelSchemes();
  // How often file and cgroup modes look for changes.
  std::chrono::milliseconds rescan_interval{1000};
  // apiserver mode: retry delay after a failure, doubling up to the cap and
  // reset by the next successful list.
  std::chrono::milliseconds backoff_initial{500};
  std::chrono::milliseconds backoff_max{30000};
  std::chrono::seconds watch_timeout{300};
  // apiserver mode: the peer-pod watch (training pods on other nodes, only
  // to name flow peers). Off when both are empty.
  std::string peer_pods_selector;
  std::vector<std::string> peer_pods_namespaces;
};

}  // namespace trainscope
