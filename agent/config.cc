#include "config.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "discovery/peer_pod_source.h"
#include "http_flags.h"
#include "version.h"

namespace trainscope {
namespace {

std::string DefaultNodeName() {
  if (const char* env = std::getenv("NODE_NAME"); env && *env) return env;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) return host;
  return "unknown";
}

// A host root must be a directory we can list, or nothing would be read.
std::string CheckHostDir(const char* flag, const std::filesystem::path& dir) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return std::string(flag) + " " + dir.string() + ": not a directory";
  }
  if (::access(dir.c_str(), R_OK | X_OK) != 0) {
    return std::string(flag) + " " + dir.string() + ": not readable";
  }
  return {};
}

}  // namespace

bool SplitListenAddress(const std::string& listen, std::string* host,
                        int* port) {
  size_t colon = listen.rfind(':');
  if (colon == std::string::npos) return false;
  std::string h = listen.substr(0, colon);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') {
    h = h.substr(1, h.size() - 2);
  }
  const char* first = listen.data() + colon + 1;
  const char* last = listen.data() + listen.size();
  int p = 0;
  auto [ptr, ec] = std::from_chars(first, last, p);
  if (ec != std::errc() || ptr != last || p < 0 || p > 65535) return false;
  *host = h.empty() ? "0.0.0.0" : h;
  *port = p;
  return true;
}

std::variant<AgentConfig, ExitRequest> ParseAgentConfig(
    int argc, const char* const* argv) {
  AgentConfig cfg;
  CLI::App app{
      "trainscope-agent: per-node monitoring of distributed training pods.\n"
      "Every flag can also be set with the environment variable shown."};
  app.set_version_flag("--version", std::string(kVersion));
  auto* listen =
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
      ->check(CLI::PositiveNumber);
  app.add_option("--node-name", cfg.node_name,
                 "Node this agent runs on (default: $NODE_NAME, else the "
                 "hostname)")
      ->envname("TRAINSCOPE_NODE_NAME");
  app.add_option("--discovery", cfg.discovery_mode,
                 "Pod discovery: apiserver (list/watch the Kubernetes API), "
                 "file (a PodList JSON file), cgroup (kubelet cgroups only)")
      ->envname("TRAINSCOPE_DISCOVERY")
      ->capture_default_str()
      ->check(CLI::IsMember({"apiserver", "file", "cgroup"}));
  app.add_option("--pod-file", cfg.pod_file,
                 "PodList JSON file for --discovery file (re-read on change)")
      ->envname("TRAINSCOPE_POD_FILE");
  app.add_option("--kube-api", cfg.kube_api,
                 "Kubernetes API URL (default in a cluster: "
                 "https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT)")
      ->envname("TRAINSCOPE_KUBE_API");
  app.add_option("--kube-token-file", cfg.kube_token_file,
                 "Bearer token file for --kube-api (default in a cluster: the "
                 "service-account token)")
      ->envname("TRAINSCOPE_KUBE_TOKEN_FILE");
  app.add_option("--kube-ca-file", cfg.kube_ca_file,
                 "CA bundle to verify an https --kube-api (default in a "
                 "cluster: the service-account ca.crt)")
      ->envname("TRAINSCOPE_KUBE_CA_FILE");
  app.add_option("--peer-pods-selector", cfg.peer_pods_selector,
                 "apiserver discovery: also list/watch the training pods of "
                 "every node, only to name flow peers on other nodes (they "
                 "get no pod series). 'auto': pods whose role label (each "
                 "--role-labels role key) holds a known role; else label "
                 "selectors separated by ';' (any matches); \"\": no label "
                 "filter (every pod of --peer-pods-namespaces); 'off': no "
                 "watch. Costs: docs/flows.md")
      ->envname("TRAINSCOPE_PEER_PODS_SELECTOR")
      ->capture_default_str();
  app.add_option("--peer-pods-namespaces", cfg.peer_pods_namespaces,
                 "apiserver discovery: comma-separated namespaces whose pods "
                 "name flow peers on other nodes (all their pods without "
                 "--peer-pods-selector, else the matching ones). \"\" = off")
      ->envname("TRAINSCOPE_PEER_PODS_NAMESPACES");
  app.add_option("--role-labels", cfg.role_labels,
                 "Label keys that name a pod's training job, role and index, "
                 "as 'job_key,role_key,index_key;...' tried in order (default: "
                 "Kubeflow training-operator and mpi-operator, old "
                 "tf-/pytorch-/mpi-operator, then name/job/task; "
                 "docs/discovery.md)")
      ->envname("TRAINSCOPE_ROLE_LABELS");
  app.add_option("--pod-filter", cfg.pod_filter,
                 "Pods exported at pod and container level: training (pods "
                 "with a training role, see --role-labels; cAdvisor covers "
                 "the rest) or all. The diagnosis sees every pod either way")
      ->envname("TRAINSCOPE_POD_FILTER")
      ->capture_default_str()
      ->check(CLI::IsMember({"training", "all"}));
  app.add_option("--pod-namespaces", cfg.pod_namespaces,
                 "Comma-separated namespaces whose pods may be exported (with "
                 "--pod-filter); \"\" = every namespace")
      ->envname("TRAINSCOPE_POD_NAMESPACES");
  std::string host_proc = cfg.host.proc, host_sys = cfg.host.sys,
              cgroup_root = cfg.host.cgroup_root;
  app.add_option("--host-proc", host_proc, "Host /proc mount")
      ->envname("TRAINSCOPE_HOST_PROC")
      ->capture_default_str();
  app.add_option("--host-sys", host_sys, "Host /sys mount")
      ->envname("TRAINSCOPE_HOST_SYS")
      ->capture_default_str();
  app.add_option("--cgroup-root", cgroup_root, "Host cgroup file system root")
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
      ->check(CLI::Range(2, 100000));
  app.add_option("--flows", cfg.flows_mode,
                 "Per-peer traffic source: ebpf (cgroup_skb; falls back to "
                 "pcap when BPF cannot attach), pcap (libpcap on "
                 "--pcap-interfaces), off")
      ->envname("TRAINSCOPE_FLOWS")
      ->capture_default_str()
      ->check(CLI::IsMember({"ebpf", "pcap", "off"}));
  app.add_option("--pcap-interfaces", cfg.pcap_interfaces,
                 "Comma-separated interfaces for pcap mode (default: the "
                 "node's physical NICs; \"any\" captures all)")
      ->envname("TRAINSCOPE_PCAP_INTERFACES");
  app.add_option("--node-interfaces", cfg.node_interfaces,
                 "Comma-separated interfaces that are the node's link, for "
                 "node traffic and network saturation (default: the NICs "
                 "with a backing device; bonds, VLANs and bridges have none)")
      ->envname("TRAINSCOPE_NODE_INTERFACES");
  app.add_option("--node-link-mbit", cfg.node_link_mbit,
                 "Capacity of the node's link in Mbit/s per direction, when "
                 "the driver reports none or the link is shaped (cloud "
                 "instance caps); 0 = the driver's speed")
      ->envname("TRAINSCOPE_NODE_LINK_MBIT")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--training-ports", cfg.training_ports,
                 "Comma-separated training ports pcap mode captures (both "
                 "directions)")
      ->envname("TRAINSCOPE_TRAINING_PORTS")
      ->capture_default_str();
  app.add_option("--flow-map-entries", cfg.flow_map_entries,
                 "Entries of the in-kernel flow map (LRU; one per pod, peer, "
                 "port pair and direction)")
      ->envname("TRAINSCOPE_FLOW_MAP_ENTRIES")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("--step-burst-gap", cfg.step_burst_gap_seconds,
                 "Seconds of silence that end an exchange burst between a "
                 "pod and a peer; training step rates are the period of "
                 "these bursts (0 = no step rates)")
      ->envname("TRAINSCOPE_STEP_BURST_GAP")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--pcap-buffer-bytes", cfg.pcap_buffer_bytes,
                 "Kernel ring buffer per captured interface in pcap mode")
      ->envname("TRAINSCOPE_PCAP_BUFFER_BYTES")
      ->capture_default_str()
      ->check(CLI::Range(1 << 16, 1 << 30));
  app.add_option("--cgroup2-path", cfg.cgroup2_path,
                 "cgroup v2 mount the eBPF programs attach under (default: "
                 "--cgroup-root if it is cgroup2, else <cgroup-root>/unified)")
      ->envname("TRAINSCOPE_CGROUP2_PATH");
  app.add_option("--profiler", cfg.profiler_mode,
                 "On-demand CPU/off-CPU profiles of pods through "
                 "/api/v1/profile (perf_event + BPF; docs/profiling.md)")
      ->envname("TRAINSCOPE_PROFILER")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--profile-max-seconds", cfg.profile_max_seconds,
                 "Longest profile /api/v1/profile accepts (seconds=)")
      ->envname("TRAINSCOPE_PROFILE_MAX_SECONDS")
      ->capture_default_str()
      ->check(CLI::Range(1, 3600));
  app.add_option("--profile-max-concurrent", cfg.profile_max_concurrent,
                 "Profiles running at once on this node (one per pod); one "
                 "more is answered 429")
      ->envname("TRAINSCOPE_PROFILE_MAX_CONCURRENT")
      ->capture_default_str()
      ->check(CLI::Range(1, 64));
  app.add_option("--profile-max-hz", cfg.profile_max_hz,
                 "Highest sampling rate (hz=, per CPU) a CPU profile may ask "
                 "for; the default rate is 99")
      ->envname("TRAINSCOPE_PROFILE_MAX_HZ")
      ->capture_default_str()
      ->check(CLI::Range(1, 10000));
  app.add_option("--profile-continuous", cfg.profile_continuous,
                 "Low-rate CPU profiling of every training pod, kept as each "
                 "pod's top functions over the last 5 minutes "
                 "(/api/v1/profile/top, diagnosis evidence); needs "
                 "--profiler on")
      ->envname("TRAINSCOPE_PROFILE_CONTINUOUS")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--profile-continuous-hz", cfg.profile_continuous_hz,
                 "Samples per second per CPU of the continuous profile")
      ->envname("TRAINSCOPE_PROFILE_CONTINUOUS_HZ")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("--profile-continuous-offcpu", cfg.profile_continuous_offcpu,
                 "Also keep each training pod's top off-CPU wait sites "
                 "(sched_switch on every context switch of the node; "
                 "/api/v1/profile/top?type=offcpu, straggler evidence)")
      ->envname("TRAINSCOPE_PROFILE_CONTINUOUS_OFFCPU")
      ->capture_default_str()
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--log-level", cfg.log_level,
                 "trace, debug, info, warn, error or off")
      ->envname("TRAINSCOPE_LOG_LEVEL")
      ->capture_default_str()
      ->check(CLI::IsMember(
          {"trace", "debug", "info", "warn", "error", "critical", "off"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return ExitRequest{app.exit(e)};
  }

  auto fail = [](const std::string& message) {
    std::cerr << "trainscope-agent: " << message << "\n";
    return ExitRequest{2};
  };
  if (!SplitListenAddress(cfg.listen, &cfg.listen_host, &cfg.listen_port)) {
    return fail("--listen " + cfg.listen +
                ": expected ADDR:PORT with a port from 0 to 65535");
  }
  (void)listen;
  if (!cfg.web_config_file.empty()) {
    if (Status web = LoadWebConfig(cfg.web_config_file, &cfg.web); !web.ok()) {
      return fail("--web-config-file " + web.message());
    }
  }
  if (cfg.node_name.empty()) cfg.node_name = DefaultNodeName();
  cfg.host.proc = host_proc;
  cfg.host.sys = host_sys;
  cfg.host.cgroup_root = cgroup_root;
  for (auto [flag, dir] : {std::pair{"--host-proc", cfg.host.proc},
                           {"--host-sys", cfg.host.sys},
                           {"--cgroup-root", cfg.host.cgroup_root}}) {
    if (auto err = CheckHostDir(flag, dir); !err.empty()) return fail(err);
  }
  cfg.training_port_list.clear();
  for (size_t start = 0; start <= cfg.training_ports.size();) {
    size_t end = cfg.training_ports.find(',', start);
    if (end == std::string::npos) end = cfg.training_ports.size();
    std::string item = cfg.training_ports.substr(start, end - start);
    start = end + 1;
    if (item.empty()) continue;
    int port = 0;
    auto [ptr, ec] =
        std::from_chars(item.data(), item.data() + item.size(), port);
    if (ec != std::errc() || ptr != item.data() + item.size() || port < 1 ||
        port > 65535) {
      return fail("--training-ports " + cfg.training_ports +
                  ": expected a comma-separated list of ports 1-65535");
    }
    cfg.training_port_list.push_back(static_cast<uint16_t>(port));
  }
  if (cfg.flows_mode == "pcap" && cfg.training_port_list.empty()) {
    return fail("--training-ports: pcap mode needs at least one port");
  }
  for (std::string_view rest = cfg.node_interfaces; !rest.empty();) {
    const size_t comma = rest.find(',');
    std::string item(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view()
                                           : rest.substr(comma + 1);
    std::erase_if(item, [](char c) { return c == ' '; });
    if (item.empty()) continue;
    if (item.size() >= 16 || item.find('/') != std::string::npos) {
      return fail("--node-interfaces: \"" + item +
                  "\" is not an interface name (at most 15 characters, no "
                  "'/')");
    }
    cfg.node_interface_list.push_back(std::move(item));
  }
  if (Status ns =
          ParseNamespaceList(cfg.pod_namespaces, &cfg.pod_namespace_list);
      !ns.ok()) {
    return fail("--pod-namespaces: " + ns.message());
  }
  if (Status ns = ParseNamespaceList(cfg.peer_pods_namespaces,
                                     &cfg.peer_pods_namespace_list);
      !ns.ok()) {
    return fail("--peer-pods-namespaces: " + ns.message());
  }
  const bool explicit_peers =
      (!cfg.peer_pods_selector.empty() && cfg.peer_pods_selector != "auto" &&
       cfg.peer_pods_selector != "off") ||
      !cfg.peer_pods_namespace_list.empty();
  if (explicit_peers && cfg.discovery_mode != "apiserver") {
    return fail(
        "--peer-pods-selector/--peer-pods-namespaces need --discovery "
        "apiserver");
  }
  if (cfg.discovery_mode == "file" && cfg.pod_file.empty()) {
    return fail("--discovery file needs --pod-file PATH");
  }
  return cfg;
}

}  // namespace trainscope
