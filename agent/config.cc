#include "config.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <charconv>
#include <cstdlib>
#include <filesystem>
#include <iostream>

#include "config_flags.h"
#include "discovery/peer_pod_source.h"

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

// Each step turns the text of some flags into `cfg`; "" or what is wrong.
using Step = std::string (*)(const FlagText&, AgentConfig&);

std::string ApplyServer(const FlagText&, AgentConfig& cfg) {
  if (!SplitListenAddress(cfg.listen, &cfg.listen_host, &cfg.listen_port)) {
    return "--listen " + cfg.listen +
           ": expected ADDR:PORT with a port from 0 to 65535";
  }
  if (!cfg.web_config_file.empty()) {
    if (Status web = LoadWebConfig(cfg.web_config_file, &cfg.web); !web.ok())
      return "--web-config-file " + web.message();
  }
  if (cfg.node_name.empty()) cfg.node_name = DefaultNodeName();
  return {};
}

std::string ApplyHostPaths(const FlagText& text, AgentConfig& cfg) {
  cfg.host.proc = text.host_proc;
  cfg.host.sys = text.host_sys;
  cfg.host.cgroup_root = text.cgroup_root;
  for (auto [flag, dir] : {std::pair{"--host-proc", cfg.host.proc},
                           {"--host-sys", cfg.host.sys},
                           {"--cgroup-root", cfg.host.cgroup_root}}) {
    if (auto err = CheckHostDir(flag, dir); !err.empty()) return err;
  }
  return {};
}

std::string ApplyDiscovery(const FlagText& text, AgentConfig& cfg) {
  DiscoveryConfig& d = cfg.discovery;
  d.mode = *EnumFromName(kDiscoveryModeNames, text.discovery);
  d.node_name = cfg.node_name;
  if (!text.role_labels.empty()) {
    if (Status parsed = ParseLabelSchemes(text.role_labels, &d.label_schemes);
        !parsed.ok())
      return "--role-labels: " + parsed.message();
  }
  if (Status ns = ParseNamespaceList(text.peer_pods_namespaces,
                                     &d.peer_pods_namespaces);
      !ns.ok())
    return "--peer-pods-namespaces: " + ns.message();
  const bool explicit_peers = (!d.peer_pods_selector.empty() &&
                               d.peer_pods_selector != kAutoPeerSelector &&
                               d.peer_pods_selector != "off") ||
                              !d.peer_pods_namespaces.empty();
  if (explicit_peers && d.mode != DiscoveryMode::kApiServer) {
    return "--peer-pods-selector/--peer-pods-namespaces need --discovery "
           "apiserver";
  }
  if (d.mode == DiscoveryMode::kFile && d.pod_file.empty())
    return "--discovery file needs --pod-file PATH";
  return {};
}

std::string ApplyPodFilter(const FlagText& text, AgentConfig& cfg) {
  cfg.pod_filter.training_only = text.pod_filter == "training";
  if (Status ns =
          ParseNamespaceList(text.pod_namespaces, &cfg.pod_filter.namespaces);
      !ns.ok())
    return "--pod-namespaces: " + ns.message();
  return {};
}

// The agent's own steps, in this order (later steps read what earlier ones
// set: the node name, the host paths), then the collectors' flags in
// registry order; the first problem found, "" when none.
std::string SettleFlags(const FlagText& text, AgentConfig& cfg) {
  const Step steps[] = {ApplyServer, ApplyHostPaths, ApplyDiscovery,
                        ApplyPodFilter};
  for (const Step& step : steps) {
    if (std::string error = step(text, cfg); !error.empty()) return error;
  }
  for (const CollectorFlagsPtr& flags : text.collectors) {
    if (std::string error = flags->Finish(); !error.empty()) return error;
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
  // The agent's default (the library's is no watch): training pods of
  // every node name cross-node peers.
  cfg.discovery.peer_pods_selector = std::string(kAutoPeerSelector);
  FlagText text;
  CLI::App app{
      "trainscope-agent: per-node monitoring of distributed training pods.\n"
      "Every flag can also be set with the environment variable shown."};
  AddAgentFlags(app, cfg, text);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version exit 0; every flag error exits 2, as a bad value
    // found after parsing does (CLI11's own codes run from 100 to 115).
    return ExitRequest{app.exit(e) == 0 ? 0 : 2};
  }
  if (std::string error = SettleFlags(text, cfg); !error.empty()) {
    std::cerr << "trainscope-agent: " << error << "\n";
    return ExitRequest{2};
  }
  return cfg;
}

}  // namespace trainscope
