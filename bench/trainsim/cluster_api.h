#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "layout.h"

namespace trainsim {

// How a run's agents reach the API server (their --kube-* flags).
struct AgentApiAccess {
  std::string url;
  std::string ca_file;     // "" = plain http
  std::string token_file;  // "" = no token
};

// Where a run's nodes and pods live in the Kubernetes API. Two kinds: the
// in-process fake API server of one run (the default), or a real API
// server shared by the run's nodes (`--kubeconfig`, kube_cluster_api.h),
// where trainsim plays the kubelet: it creates the objects and writes
// their status. Either way every node's agent discovers its pods through
// it with `--discovery apiserver`.
class ClusterApi {
 public:
  virtual ~ClusterApi() = default;

  // Registers the layout's nodes (Node objects on a real server; the fake
  // lists pods only).
  virtual void CreateNodes(const Layout& layout) = 0;
  // Creates a pod (PodJson) with its status; returns its uid. A real
  // server assigns a new one, which the pod's cgroups must then carry, as
  // the kubelet names them after the API's uid.
  virtual std::string CreatePod(const nlohmann::json& pod) = 0;
  // Publishes a changed pod (labels, annotations, resources, status): a
  // MODIFIED event for the agents' watches.
  virtual void UpdatePod(const nlohmann::json& pod) = 0;
  // Deletes everything CreateNodes and CreatePod made (and namespaces made
  // for them). Safe to call twice; never throws.
  virtual void DeleteAll() noexcept = 0;

  virtual AgentApiAccess agent_access() const = 0;
  // Whether uids come from the server (CreatePod returns a new one).
  virtual bool assigns_uids() const = 0;
};

// The fake API server of tests/support, in this process, on a free
// loopback port. Throws when it cannot listen.
std::unique_ptr<ClusterApi> StartFakeClusterApi();

}  // namespace trainsim
