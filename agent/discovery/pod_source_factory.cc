#include "discovery/pod_source_factory.h"

#include <cstdlib>
#include <filesystem>

#include "discovery/cgroup_scan_source.h"
#include "discovery/peer_pod_source.h"
#include "discovery/pod_file_source.h"

namespace trainscope {

EnvLookup ProcessEnv() {
  return [](const char* name) -> std::optional<std::string> {
    const char* value = std::getenv(name);
    if (value == nullptr || *value == '\0') return std::nullopt;
    return std::string(value);
  };
}

Status ResolveApiServerOptions(const DiscoveryConfig& config,
                               const EnvLookup& env,
                               ApiServerSourceOptions* out) {
  ApiServerSourceOptions o;
  o.node_name = config.node_name;
  o.label_schemes = config.label_schemes;
  o.backoff_initial = config.backoff_initial;
  o.backoff_max = config.backoff_max;
  o.watch_timeout = config.watch_timeout;
  o.token_file = config.kube_token_file;
  o.ca_file = config.kube_ca_file;
  if (!config.kube_api.empty()) {
    o.api_url = config.kube_api;
  } else {
    auto host = env("KUBERNETES_SERVICE_HOST");
    if (!host) {
      return Status::Error(
          "apiserver discovery: not running in a cluster "
          "(KUBERNETES_SERVICE_HOST unset) and no --kube-api URL given");
    }
    const std::string port = env("KUBERNETES_SERVICE_PORT").value_or("443");
    const bool v6 = host->find(':') != std::string::npos;
    o.api_url = "https://" + (v6 ? "[" + *host + "]" : *host) + ":" + port;
    const std::filesystem::path sa = config.service_account_dir;
    // In a cluster the token is not optional: anonymous requests fail.
    if (o.token_file.empty()) o.token_file = (sa / "token").string();
    if (o.ca_file.empty()) {
      std::error_code ec;
      if (std::filesystem::exists(sa / "ca.crt", ec)) {
        o.ca_file = (sa / "ca.crt").string();
      }
    }
  }
  *out = std::move(o);
  return Status::Ok();
}

std::unique_ptr<PodSource> MakePodSource(const DiscoveryConfig& config,
                                         const HostPaths& host, PodTable& table,
                                         Status* error, const EnvLookup& env) {
  *error = Status::Ok();
  if (config.label_schemes.empty()) {
    *error = Status::Error("discovery: no role label schemes configured");
    return nullptr;
  }
  switch (config.mode) {
    case DiscoveryMode::kApiServer: {
      ApiServerSourceOptions options;
      *error = ResolveApiServerOptions(config, env, &options);
      if (!error->ok()) return nullptr;
      return std::make_unique<ApiServerSource>(std::move(options), table);
    }
    case DiscoveryMode::kFile: {
      if (config.pod_file.empty()) {
        *error = Status::Error("file discovery needs --pod-file PATH");
        return nullptr;
      }
      PodFileSourceOptions options;
      options.path = config.pod_file;
      options.poll_interval = config.rescan_interval;
      options.label_schemes = config.label_schemes;
      options.node_name = config.node_name;
      return std::make_unique<PodFileSource>(std::move(options), table);
    }
    case DiscoveryMode::kCgroup: {
      CgroupScanSourceOptions options;
      options.interval = config.rescan_interval;
      options.label_schemes = config.label_schemes;
      return std::make_unique<CgroupScanSource>(std::move(options), host,
                                                table);
    }
  }
  *error = Status::Error("unknown discovery mode");
  return nullptr;
}

std::unique_ptr<PodSource> MakePeerPodSource(const DiscoveryConfig& config,
                                             PodTable& table, Status* error,
                                             const EnvLookup& env) {
  *error = Status::Ok();
  if (config.peer_pods_selector == "off") return nullptr;
  const bool automatic = config.peer_pods_selector == kAutoPeerSelector &&
                         config.peer_pods_namespaces.empty();
  // Only the API server knows pods of other nodes; the default quietly
  // does nothing in the other modes, an explicit request is an error.
  if (automatic && config.mode != DiscoveryMode::kApiServer) return nullptr;
  std::vector<PodsQuery> queries = PeerPodQueries(
      ResolvePeerPodSelectors(config.peer_pods_selector, config.label_schemes),
      config.peer_pods_namespaces);
  if (queries.empty()) return nullptr;
  if (config.mode != DiscoveryMode::kApiServer) {
    *error = Status::Error(
        "--peer-pods-selector/--peer-pods-namespaces need --discovery "
        "apiserver (other modes already know every pod they can see)");
    return nullptr;
  }
  ApiServerSourceOptions options;
  *error = ResolveApiServerOptions(config, env, &options);
  if (!error->ok()) return nullptr;
  return std::make_unique<PeerPodSource>(options, std::move(queries), table);
}

}  // namespace trainscope
