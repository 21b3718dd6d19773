#pragma once

#include <optional>
#include <string>
#include <variant>

#include "discovery/discovery_config.h"
#include "exposition/pod_filter.h"
#include "http/connections.h"
#include "http/web_config.h"
#include "profiler/profiler_options.h"
#include "trainscope/collector_options.h"
#include "trainscope/host_paths.h"

namespace trainscope {

// Everything the flags say, parsed and checked once: each component's own
// options struct, ready to hand over (nothing is copied field by field
// later, and no mode is compared as a string).
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
  // --discovery, --pod-file, --kube-*, --peer-pods-*, --role-labels.
  DiscoveryConfig discovery;
  // --pod-filter, --pod-namespaces: which pods get pod/container series.
  PodFilter pod_filter{.training_only = true};
  std::string log_level = "info";
  std::string log_format = "text";  // "text" | "json" (log_format.h)
  int history_size = 60;            // what the diagnosis reads: 5 min at 5 s
  // Each collector's options, set by its flags (collector_registry.cc):
  // FlowsOptions, NodeOptions, GpuOptions.
  CollectorOptions collectors;
  // --profiler on (--profile-max-*): on-demand profiles; empty when off.
  std::optional<profiler::ProfilerOptions> on_demand_profiler =
      profiler::ProfilerOptions{};
  // --profile-continuous on (needs --profiler on); empty when off.
  std::optional<profiler::ContinuousOptions> continuous_profiler =
      profiler::ContinuousOptions{};
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
