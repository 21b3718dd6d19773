#include "config_flags.h"

#include <chrono>
#include <string>

#include "collector_registry.h"
#include "http/flags.h"
#include "trainscope/flag_checks.h"
#include "version.h"

namespace trainscope {
namespace {

// The sampling interval: below 0.1 s the cycle's own work (every pod's
// cgroup files, the flows map) becomes the node's load; above an hour the
// diagnosis window (60 snapshots) spans days.
constexpr double kMinIntervalSeconds = 0.1;
constexpr double kMaxIntervalSeconds = 3600;

}  // namespace

void AddServerFlags(CLI::App& app, AgentConfig& cfg) {
  app.set_version_flag("--version", std::string(kVersion));
  app.add_option("--listen", cfg.listen, "HTTP listen address ADDR:PORT")
      ->envname("TRAINSCOPE_LISTEN")
      ->capture_default_str();
  AddHttpFlags(app, &cfg.http);
  app.add_option("--web-config-file", cfg.web_config_file,
                 "YAML file enabling TLS and/or authentication, in the "
                 "format of Prometheus's exporter-toolkit web config "
                 "(tls_server_config, basic_auth_users; bearer tokens via "
                 "'authorization: {credentials_file: PATH}'). /healthz and "
                 "/readyz stay open. docs/reliability.md, \"Security\"")
      ->envname("TRAINSCOPE_WEB_CONFIG_FILE");
  app.add_option("--interval", cfg.interval_seconds,
                 "Sampling interval in seconds (fractions allowed)")
      ->envname("TRAINSCOPE_INTERVAL")
      ->capture_default_str()
      ->check(NumberIn(kMinIntervalSeconds, kMaxIntervalSeconds, true));
  app.add_option("--node-name", cfg.node_name,
                 "Node this agent runs on (default: $NODE_NAME, else the "
                 "hostname)")
      ->envname("TRAINSCOPE_NODE_NAME");
}

void AddDiscoveryFlags(CLI::App& app, AgentConfig& cfg, FlagText& text) {
  app.add_option("--discovery", text.discovery,
                 "Pod discovery: apiserver (list/watch the Kubernetes API), "
                 "file (a PodList JSON file), cgroup (kubelet cgroups only)")
      ->envname("TRAINSCOPE_DISCOVERY")
      ->capture_default_str()
      ->check(CLI::IsMember(EnumNames(kDiscoveryModeNames)));
  app.add_option("--pod-file", cfg.discovery.pod_file,
                 "PodList JSON file for --discovery file (re-read on change)")
      ->envname("TRAINSCOPE_POD_FILE");
  app.add_option("--kube-api", cfg.discovery.kube_api,
                 "Kubernetes API URL (default in a cluster: "
                 "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
      ->envname("TRAINSCOPE_KUBE_API");
  app.add_option("--kube-token-file", cfg.discovery.kube_token_file,
                 "Bearer token file for --kube-api (default in a cluster: the "
                 "service-account token)")
      ->envname("TRAINSCOPE_KUBE_TOKEN_FILE");
  app.add_option("--kube-ca-file", cfg.discovery.kube_ca_file,
                 "CA bundle to verify an https --kube-api (default in a "
                 "cluster: the service-account ca.crt)")
      ->envname("TRAINSCOPE_KUBE_CA_FILE");
  app.add_option_function<int>(
         "--kube-watch-timeout",
         [&cfg](int seconds) {
           cfg.discovery.watch_timeout = std::chrono::seconds(seconds);
         },
         "apiserver discovery: seconds each watch asks the API server to "
         "run (timeoutSeconds) before it is renewed from the last "
         "resourceVersion (docs/discovery.md)")
      ->envname("TRAINSCOPE_KUBE_WATCH_TIMEOUT")
      ->default_str(std::to_string(DiscoveryConfig{}.watch_timeout.count()))
      ->check(CLI::Range(1, 3600));
  app.add_option("--peer-pods-selector", cfg.discovery.peer_pods_selector,
                 "apiserver discovery: also list/watch the training pods of "
                 "every node, only to name flow peers on other nodes (they "
                 "get no pod series). 'auto': pods whose role label (each "
                 "--role-labels role key) holds a known role; else label "
                 "selectors separated by ';' (any matches); \"\": no label "
                 "filter (every pod of --peer-pods-namespaces); 'off': no "
                 "watch. Costs: docs/flows.md")
      ->envname("TRAINSCOPE_PEER_PODS_SELECTOR")
      ->capture_default_str();
  app.add_option("--peer-pods-namespaces", text.peer_pods_namespaces,
                 "apiserver discovery: comma-separated namespaces whose pods "
                 "name flow peers on other nodes (all their pods without "
                 "--peer-pods-selector, else the matching ones). \"\" = off")
      ->envname("TRAINSCOPE_PEER_PODS_NAMESPACES");
  app.add_option("--role-labels", text.role_labels,
                 "Label keys that name a pod's training job, role and index, "
                 "as 'job_key,role_key,index_key;...' tried in order (default: "
                 "Kubeflow training-operator and mpi-operator, old "
                 "tf-/pytorch-/mpi-operator, then name/job/task; "
                 "docs/discovery.md)")
      ->envname("TRAINSCOPE_ROLE_LABELS");
  app.add_option("--pod-filter", text.pod_filter,
                 "Pods exported at pod and container level: training (pods "
                 "with a training role, see --role-labels; cAdvisor covers "
                 "the rest) or all. The diagnosis sees every pod either way")
      ->envname("TRAINSCOPE_POD_FILTER")
      ->capture_default_str()
      ->check(CLI::IsMember({"training", "all"}));
  app.add_option("--pod-namespaces", text.pod_namespaces,
                 "Comma-separated namespaces whose pods may be exported (with "
                 "--pod-filter); \"\" = every namespace")
      ->envname("TRAINSCOPE_POD_NAMESPACES");
}

void AddHostFlags(CLI::App& app, AgentConfig& cfg, FlagText& text) {
  app.add_option("--host-proc", text.host_proc, "Host /proc mount")
      ->envname("TRAINSCOPE_HOST_PROC")
      ->capture_default_str();
  app.add_option("--host-sys", text.host_sys, "Host /sys mount")
      ->envname("TRAINSCOPE_HOST_SYS")
      ->capture_default_str();
  app.add_option("--cgroup-root", text.cgroup_root,
                 "Host cgroup file system root")
      ->envname("TRAINSCOPE_CGROUP_ROOT")
      ->capture_default_str();
  app.add_option("--history", cfg.history_size,
                 "Snapshots kept in memory for the diagnosis window")
      ->envname("TRAINSCOPE_HISTORY")
      ->capture_default_str()
      ->check(WholeNumberIn(2, 100000));
}

void AddLogFlags(CLI::App& app, AgentConfig& cfg) {
  app.add_option("--log-level", cfg.log_level,
                 "trace, debug, info, warn, error or off")
      ->envname("TRAINSCOPE_LOG_LEVEL")
      ->capture_default_str()
      ->check(CLI::IsMember(
          {"trace", "debug", "info", "warn", "error", "critical", "off"}));
  app.add_option("--log-format", cfg.log_format,
                 "text (time, level, message) or json (one object per "
                 "line: ts, level, component, msg)")
      ->envname("TRAINSCOPE_LOG_FORMAT")
      ->capture_default_str()
      ->check(CLI::IsMember({"text", "json"}));
}

void AddAgentFlags(CLI::App& app, AgentConfig& cfg, FlagText& text) {
  AddServerFlags(app, cfg);
  AddDiscoveryFlags(app, cfg, text);
  AddHostFlags(app, cfg, text);
  text.collectors = MakeCollectorFlags(cfg);
  for (const CollectorFlagsPtr& flags : text.collectors) flags->Add(app);
  AddLogFlags(app, cfg);
}

}  // namespace trainscope
