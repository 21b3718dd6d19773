#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "discovery/apiserver_source.h"
#include "discovery/discovery_config.h"
#include "discovery/pod_source.h"
#include "trainscope/host_paths.h"
#include "trainscope/pod.h"
#include "trainscope/status.h"

namespace trainscope {

// Environment lookup, injectable so tests need not touch the real
// environment. Empty optional = unset.
using EnvLookup = std::function<std::optional<std::string>(const char* name)>;
EnvLookup ProcessEnv();

// Turns flags into the API server source's options: --kube-api as given, or
// in-cluster (https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT with
// the service-account token and CA). Errors when neither is available.
Status ResolveApiServerOptions(const DiscoveryConfig& config,
                               const EnvLookup& env,
                               ApiServerSourceOptions* out);

// The source for config.mode; nullptr with *error set for an unknown mode or
// unusable settings. The source is not started: call Start().
std::unique_ptr<PodSource> MakePodSource(const DiscoveryConfig& config,
                                         const HostPaths& host, PodTable& table,
                                         Status* error,
                                         const EnvLookup& env = ProcessEnv());

// The peer-pod watch (--peer-pods-selector / --peer-pods-namespaces) filling
// `table`: nullptr with *error ok when it is off, nullptr with *error set
// when it is asked for outside apiserver mode. Not started.
std::unique_ptr<PodSource> MakePeerPodSource(
    const DiscoveryConfig& config, PodTable& table, Status* error,
    const EnvLookup& env = ProcessEnv());

}  // namespace trainscope
