#include "platform_agent.h"

#include <filesystem>
#include <sstream>

#include "agent_process.h"

namespace trainscope::testing {

namespace fs = std::filesystem;

nlohmann::json TrainingPod(const std::string& name, const std::string& node,
                           const std::string& role, int index) {
  return {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", name},
        {"namespace", "training"},
        {"labels",
         {{"training.kubeflow.org/job-name", "real"},
          {"training.kubeflow.org/replica-type", role},
          {"training.kubeflow.org/replica-index", std::to_string(index)}}}}},
      {"spec",
       {{"nodeName", node},
        {"containers", {{{"name", "tensorflow"}, {"image", "tf:2"}}}}}}};
}

nlohmann::json KubeList(const std::vector<nlohmann::json>& items) {
  return {{"apiVersion", "v1"}, {"kind", "List"}, {"items", items}};
}

std::vector<std::string> PlatformAgentArgs(const TestPlatform& platform,
                                           const std::string& token_file,
                                           int port,
                                           std::vector<std::string> extra) {
  const fs::path host =
      fs::path(TRAINSCOPE_SOURCE_DIR) / "tests/fixtures/hosts/v2-systemd";
  std::vector<std::string> args = {
      "--listen",          "127.0.0.1:" + std::to_string(port),
      "--interval",        "0.5",
      "--node-name",       "node-a",
      "--discovery",       "apiserver",
      "--kube-api",        platform.url(),
      "--kube-token-file", token_file,
      "--kube-ca-file",    platform.ca_file(),
      "--host-proc",       (host / "proc").string(),
      "--host-sys",        (host / "sys").string(),
      "--cgroup-root",     (host / "sys/fs/cgroup").string(),
      "--flows",           "off",
      "--profiler",        "off",
      "--nvml-library",    "/nonexistent/libnvidia-ml.so.1"};
  bool peer_flag = false;
  for (const auto& flag : extra) peer_flag |= flag == "--peer-pods-selector";
  if (!peer_flag) extra.insert(extra.end(), {"--peer-pods-selector", "off"});
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

std::map<std::string, std::string> AgentPods(int port) {
  std::map<std::string, std::string> out;
  const auto body = HttpGet(port, "/api/v1/pods");
  if (!body) return out;
  const auto json = nlohmann::json::parse(*body, nullptr, false);
  if (json.is_discarded()) return out;
  for (const auto& p : json.value("pods", nlohmann::json::array())) {
    out[p.value("name", "")] = p.value("uid", "");
  }
  return out;
}

std::optional<double> AgentMetric(int port, const std::string& series) {
  const auto body = HttpGet(port, "/metrics");
  if (!body) return std::nullopt;
  std::istringstream in(*body);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(series, 0) != 0 || line.size() <= series.size()) continue;
    const char next = line[series.size()];
    // `x` must not match `x_total`; without labels given, any labels do.
    if (next == ' ') return std::stod(line.substr(series.size() + 1));
    if (next == '{' && series.find('{') == std::string::npos) {
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return std::nullopt;
}

int PodInfoSeries(int port, const std::string& pod) {
  const auto body = HttpGet(port, "/metrics");
  if (!body) return 0;
  std::istringstream in(*body);
  int n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("trainscope_pod_info{", 0) == 0 &&
        line.find("pod=\"" + pod + "\"") != std::string::npos) {
      ++n;
    }
  }
  return n;
}

std::string UidOf(const TestPlatform& platform, const std::string& pod) {
  int rc = 0;
  std::string uid = platform.Kubectl(
      "get pod -n training " + pod + " -o jsonpath={.metadata.uid}", &rc);
  return rc == 0 ? uid : "";
}

}  // namespace trainscope::testing
