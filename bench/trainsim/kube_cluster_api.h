#pragma once

#include <memory>
#include <string>

#include "cluster_api.h"

namespace trainsim {

struct KubeClusterApiOptions {
  std::string kubeconfig;  // --kubeconfig FILE
  // The agents' identity: a TokenRequest token of this ServiceAccount
  // ("namespace/name"), so its ClusterRole is what allows their list and
  // watch; "" = the kubeconfig's own token.
  std::string agent_service_account = "trainscope/trainscope-agent";
  // Where the agents' token (and the CA, from certificate-authority-data)
  // are written; the run dir, removed with the run.
  std::string files_dir;
  // How long the agents' token lives (the API server's minimum is 600 s).
  int64_t token_seconds = 3600;
};

// The real API server of a kubeconfig (kube_cluster_api.cc). Checks the
// connection and fetches the agents' token; throws with the reason.
std::unique_ptr<ClusterApi> ConnectKubeClusterApi(
    const KubeClusterApiOptions& options);

}  // namespace trainsim
