#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "http_connections.h"
#include "trainscope/host_paths.h"
#include "web_config.h"

namespace trainscope {

struct AgentConfig {
  std::string listen = "0.0.0.0:9476";
  std::string listen_host = "0.0.0.0";
  int listen_port = 9476;
  HttpLimits http;  // --http-* flags
  // --web-config-file: TLS and authentication, read at start-up.
  std::string web_config_file;
  WebConfig web;
  double interval_seconds = 5;
  std::string node_name;
  HostPaths host;
  std::string discovery_mode = "apiserver";
  std::string pod_file;
  std::string kube_api;
  std::string kube_token_file;
  std::string kube_ca_file;
  // Peer-pod watch (apiserver discovery): label selectors (';' = or; "auto"
  // = from the role labels, "off"/"" = none) and/or a comma list of
  // namespaces.
  std::string peer_pods_selector = "auto";
  std::string peer_pods_namespaces;
  std::vector<std::string> peer_pods_namespace_list;
  std::string role_labels;  // "job_key,role_key,index_key;..."; "" = default
  // Which pods get pod/container series: "training" (a known role) or
  // "all", and an optional namespace allowlist (comma list).
  std::string pod_filter = "training";
  std::string pod_namespaces;
  std::vector<std::string> pod_namespace_list;
  std::string nvml_library = "libnvidia-ml.so.1";
  std::string log_level = "info";
  int history_size = 60;  // what the diagnosis reads: 5 min at 5 s
  // flows (issue 4)
  std::string flows_mode = "ebpf";  // ebpf (falls back to pcap) | pcap | off
  std::string pcap_interfaces;      // comma list; "" = physical NICs
  std::string training_ports = "2222";  // comma list
  std::vector<uint16_t> training_port_list = {2222};
  uint32_t flow_map_entries = 65536;
  double step_burst_gap_seconds = 0.02;
  int pcap_buffer_bytes = 32 << 20;
  std::string cgroup2_path;  // "" = found under --cgroup-root
  // The node's uplink: interfaces whose counters are the node's link
  // ("" = the NICs with a backing device) and its capacity (0 = the speed
  // the driver reports).
  std::string node_interfaces;
  std::vector<std::string> node_interface_list;
  double node_link_mbit = 0;
  // profiler (issue 17): on-demand profiles through /api/v1/profile.
  std::string profiler_mode = "on";  // on | off
  int profile_max_seconds = 60;
  int profile_max_concurrent = 2;
  int profile_max_hz = 1000;
  std::string profile_continuous = "on";  // on | off (needs --profiler on)
  int profile_continuous_hz = 19;
  std::string profile_continuous_offcpu = "off";  // on | off
};

// Exit code for the caller when parsing ends the program (--help, --version
// or an error already printed to stderr).
struct ExitRequest {
  int code;
};

// Parses flags; every flag also reads TRAINSCOPE_<NAME> from the
// environment (flag wins). Validates values and host paths.
std::variant<AgentConfig, ExitRequest> ParseAgentConfig(
    int argc, const char* const* argv);

// "host:port", "[::1]:port" or ":port"; false when malformed.
bool SplitListenAddress(const std::string& listen, std::string* host,
                        int* port);

}  // namespace trainscope
