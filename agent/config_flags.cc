#include "config_flags.h"

#include <chrono>
#include <string>

#include "http_flags.h"
#include "trainscope/flag_checks.h"
#include "version.h"

namespace trainscope {
namespace {

// The sampling interval: below 0.1 s the cycle's own work (every pod's
// cgroup files, the flows map) becomes the node's load; above an hour the
// diagnosis window (60 snapshots) spans days.
constexpr double kMinIntervalSeconds = 0.1;
constexpr double kMaxIntervalSeconds = 3600;
// 10 Tbit/s: above any NIC or bond made; a larger figure is a typo.
constexpr double kMaxLinkMbit = 1e7;
// A burst gap under a millisecond cuts every packet into its own burst: a
// ring-buffer event per packet for nothing a step rate could use.
constexpr double kMinBurstGapSeconds = 0.001;

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
  app.add_option("--nvml-library", cfg.nvml_library,
                 "NVML library to dlopen for GPU metrics")
      ->envname("TRAINSCOPE_NVML_LIBRARY")
      ->capture_default_str();
  app.add_option("--history", cfg.history_size,
                 "Snapshots kept in memory for the diagnosis window")
      ->envname("TRAINSCOPE_HISTORY")
      ->capture_default_str()
      ->check(WholeNumberIn(2, 100000));
}

void AddFlowsFlags(CLI::App& app, AgentConfig& cfg, FlagText& text) {
  app.add_option("--flows", text.flows,
                 "Per-peer traffic source: ebpf (cgroup_skb; falls back to "
                 "pcap when BPF cannot attach), pcap (libpcap on "
                 "--pcap-interfaces), off")
      ->envname("TRAINSCOPE_FLOWS")
      ->capture_default_str()
      ->check(CLI::IsMember(EnumNames(kFlowsModeNames)));
  app.add_option("--pcap-interfaces", text.pcap_interfaces,
                 "Comma-separated interfaces for pcap mode (default: the "
                 "node's physical NICs; \"any\" captures all)")
      ->envname("TRAINSCOPE_PCAP_INTERFACES");
  app.add_option("--node-interfaces", text.node_interfaces,
                 "Comma-separated interfaces that are the node's link, for "
                 "node traffic and network saturation (default: the NICs "
                 "with a backing device; bonds, VLANs and bridges have none)")
      ->envname("TRAINSCOPE_NODE_INTERFACES");
  app.add_option("--node-link-mbit", text.node_link_mbit,
                 "Capacity of the node's link in Mbit/s per direction, when "
                 "the driver reports none or the link is shaped (cloud "
                 "instance caps); 0 = the driver's speed")
      ->envname("TRAINSCOPE_NODE_LINK_MBIT")
      ->check(NumberIn(0, kMaxLinkMbit, true));
  app.add_option("--training-ports", text.training_ports,
                 "Comma-separated training ports pcap mode captures (both "
                 "directions)")
      ->envname("TRAINSCOPE_TRAINING_PORTS")
      ->capture_default_str();
  app.add_option("--flow-map-entries", cfg.flows.map_entries,
                 "Entries of the in-kernel flow map (LRU; one per pod, peer, "
                 "port pair and direction)")
      ->envname("TRAINSCOPE_FLOW_MAP_ENTRIES")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 1 << 24));
  app.add_option("--step-burst-gap", cfg.flows.burst_gap_s,
                 "Seconds of silence that end an exchange burst between a "
                 "pod and a peer; training step rates are the period of "
                 "these bursts and the diagnoses' costs their share of time "
                 "(0 = neither; a gap longer than the compute between "
                 "exchanges makes costs run high: docs/diagnosis.md)")
      ->envname("TRAINSCOPE_STEP_BURST_GAP")
      ->capture_default_str()
      ->check(ZeroOrNumberIn(kMinBurstGapSeconds, 1));
  app.add_option("--pcap-buffer-bytes", cfg.flows.pcap_buffer_bytes,
                 "Kernel ring buffer per captured interface in pcap mode")
      ->envname("TRAINSCOPE_PCAP_BUFFER_BYTES")
      ->capture_default_str()
      ->check(WholeNumberIn(1 << 16, 1 << 30));
  app.add_option("--cgroup2-path", text.cgroup2_path,
                 "cgroup v2 mount the eBPF programs attach under (default: "
                 "--cgroup-root if it is cgroup2, else <cgroup-root>/unified)")
      ->envname("TRAINSCOPE_CGROUP2_PATH");
}

void AddProfilerFlags(CLI::App& app, AgentConfig& cfg, FlagText& text) {
  app.add_option("--profiler", text.profiler,
                 "On-demand CPU/off-CPU profiles of pods through "
                 "/api/v1/profile (perf_event + BPF; docs/profiling.md)")
      ->envname("TRAINSCOPE_PROFILER")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--profile-max-seconds", cfg.on_demand_profiler->max_seconds,
                 "Longest profile /api/v1/profile accepts (seconds=)")
      ->envname("TRAINSCOPE_PROFILE_MAX_SECONDS")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 3600));
  app.add_option("--profile-max-concurrent",
                 cfg.on_demand_profiler->max_concurrent,
                 "Profiles running at once on this node (one per pod); one "
                 "more is answered 429")
      ->envname("TRAINSCOPE_PROFILE_MAX_CONCURRENT")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 64));
  app.add_option("--profile-max-hz", cfg.on_demand_profiler->max_hz,
                 "Highest sampling rate (hz=, per CPU) a CPU profile may ask "
                 "for; the default rate is 99")
      ->envname("TRAINSCOPE_PROFILE_MAX_HZ")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 10000));
  app.add_option("--profile-continuous", text.profile_continuous,
                 "Low-rate CPU profiling of every training pod, kept as each "
                 "pod's top functions over the last 5 minutes "
                 "(/api/v1/profile/top, diagnosis evidence); needs "
                 "--profiler on")
      ->envname("TRAINSCOPE_PROFILE_CONTINUOUS")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--profile-continuous-hz", cfg.continuous_profiler->hz,
                 "Samples per second per CPU of the continuous profile")
      ->envname("TRAINSCOPE_PROFILE_CONTINUOUS_HZ")
      ->capture_default_str()
      ->check(WholeNumberIn(1, 1000));
  app.add_option("--profile-continuous-offcpu", text.profile_continuous_offcpu,
                 "Also keep each training pod's top off-CPU wait sites "
                 "(sched_switch on every context switch of the node; "
                 "/api/v1/profile/top?type=offcpu, straggler evidence)")
      ->envname("TRAINSCOPE_PROFILE_CONTINUOUS_OFFCPU")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
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
  AddFlowsFlags(app, cfg, text);
  AddProfilerFlags(app, cfg, text);
  AddLogFlags(app, cfg);
}

}  // namespace trainscope
