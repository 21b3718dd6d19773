#include "supervisor.h"

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "agents.h"
#include "cluster_verify.h"
#include "faults.h"
#include "node.h"
#include "pod_process.h"
#include "program_pod.h"
#include "prometheus_runner.h"
#include "run_observer.h"
#include "run_results.h"

namespace trainsim {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

std::string Num(double v) { return fmt::format("{}", v); }

void PrintTruth(const SimNode& node) {
  std::map<std::string, uint64_t> steps;
  GroundTruth truth = node.Truth(&steps);
  std::printf(
      "\nBytes exchanged per peer (ground truth, counted by the pod "
      "processes):\n");
  std::printf("%-24s %-24s %16s %16s\n", "pod", "peer", "sent_bytes",
              "received_bytes");
  for (const SimPod& pod : node.layout().pods) {
    const auto& row = truth[pod.name];
    if (row.empty())
      std::printf("%-24s %-24s %16s %16s\n", pod.name.c_str(), "-", "0", "0");
    for (const auto& [peer, b] : row)
      std::printf("%-24s %-24s %16llu %16llu\n", pod.name.c_str(), peer.c_str(),
                  static_cast<unsigned long long>(b.tx),
                  static_cast<unsigned long long>(b.rx));
  }
  std::printf("steps per worker:");
  for (const SimPod& pod : node.layout().pods)
    if (pod.role != PodRole::kPs)
      std::printf(" %s=%llu", pod.name.c_str(),
                  static_cast<unsigned long long>(steps[pod.name]));
  std::printf("\n");
  // Each PS's share of its job's PS traffic: what hot_parameter_server
  // should find.
  for (const Job& job : node.scenario().jobs) {
    std::map<std::string, double> bytes;
    double total = 0;
    for (const SimPod& pod : node.layout().pods) {
      if (pod.job != &job || pod.role != PodRole::kPs) continue;
      for (const auto& [peer, b] : truth[pod.name])
        bytes[pod.name] += b.tx + b.rx;
      total += bytes[pod.name];
    }
    if (total <= 0) continue;
    std::printf("PS traffic share of job %s/%s:", job.namespace_name.c_str(),
                job.name.c_str());
    for (const auto& [pod, b] : bytes)
      std::printf(" %s=%.2f", pod.c_str(), b / total);
    std::printf("\n");
  }
  // A crashed process (the crash and oom faults) exits without writing its
  // counts: the connections of a pod that crashed cannot be compared.
  std::set<std::string> crashed;
  for (const Fault& f : node.scenario().faults)
    if (KillsPodProcess(f.kind)) crashed.insert(f.pod);
  for (const std::string& pod : crashed) {
    truth.erase(pod);
    for (auto& [name, row] : truth) row.erase(pod);
    std::printf(
        "not compared: %s crashed (its processes' counts died with "
        "them)\n",
        pod.c_str());
  }
  const auto bad = Inconsistencies(truth);
  if (bad.empty())
    std::printf("both ends of every connection agree on the byte counts\n");
  // Program pods report the kernel's per-socket counts, sampled each
  // second: their two ends may differ by what moved in the last second.
  bool programs = false;
  for (const Job& job : node.scenario().jobs)
    programs |= job.program.has_value();
  for (const std::string& b : bad)
    std::printf("%s %s\n", programs ? "differs (kernel counts)" : "MISMATCH",
                b.c_str());
  std::fflush(stdout);
}

double EpochNow() {
  return std::chrono::duration<double>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// The ground truth as JSON: per pod, per peer, the bytes the pod processes
// wrote and read, and the window they cover.
void WriteGroundTruthJson(const SimNode& node, const std::string& path,
                          double start_epoch_s, double stop_epoch_s) {
  std::map<std::string, uint64_t> steps;
  GroundTruth truth = node.Truth(&steps);
  nlohmann::ordered_json pods = nlohmann::ordered_json::object();
  for (const SimPod& pod : node.layout().pods) {
    nlohmann::ordered_json peers = nlohmann::ordered_json::object();
    for (const auto& [peer, b] : truth[pod.name])
      peers[peer] = {{"sent_bytes", b.tx}, {"received_bytes", b.rx}};
    pods[pod.name] = {{"namespace", pod.job->namespace_name},
                      {"job", pod.job->name},
                      {"role", std::string(PodRoleName(pod.role))},
                      {"ip", pod.ip},
                      {"steps", steps[pod.name]},
                      {"peers", peers}};
  }
  nlohmann::ordered_json j = {
      {"run_id", node.run_id()},
      {"scenario", node.scenario().name},
      {"bytes",
       "application payload written to / read from the peer's "
       "sockets, 8-byte requests included"},
      {"traffic_start_epoch_s", start_epoch_s},
      {"traffic_stop_epoch_s", stop_epoch_s},
      {"consistent", Inconsistencies(truth).empty()},
      {"pods", pods}};
  WriteJsonFile(path, j);
}

void PrintBanner(const SimNode& node, const std::vector<AgentProcess>& agents,
                 const PrometheusRunner* prometheus, bool until_stopped) {
  const Layout& layout = node.layout();
  if (!layout.cluster()) {
    std::printf("trainsim run %s: scenario %s, %zu pods on node %s\n",
                node.run_id().c_str(), node.scenario().name.c_str(),
                layout.pods.size(), layout.node_name.c_str());
  } else {
    std::printf("trainsim run %s: scenario %s, %zu pods on %zu nodes\n",
                node.run_id().c_str(), node.scenario().name.c_str(),
                layout.pods.size(), layout.nodes.size());
    for (size_t k = 0; k < layout.nodes.size(); ++k) {
      std::string pods;
      for (const SimPod& p : layout.pods)
        if (p.node == static_cast<int>(k)) pods += " " + p.name;
      std::printf("  node %-12s uplink %s:%s\n", layout.nodes[k].name.c_str(),
                  layout.nodes[k].uplink.c_str(), pods.c_str());
    }
  }
  std::printf("  Kubernetes API: %s/api/v1/pods\n", node.api_url().c_str());
  for (const AgentProcess& a : agents) {
    const std::string of = layout.cluster() ? " (" + a.node + ")" : "";
    std::printf("  agent metrics:  %s/metrics%s\n", a.url().c_str(),
                of.c_str());
    std::printf("  agent report:   %s/api/v1/report%s\n", a.url().c_str(),
                of.c_str());
    std::printf("  agent log:      %s\n", a.log.c_str());
  }
  if (prometheus)
    std::printf(
        "  Prometheus:     %s (cluster view: trainscope report "
        "--prometheus %s)\n",
        prometheus->url().c_str(), prometheus->url().c_str());
  if (until_stopped)
    std::printf("  stop with:      trainsim down --run-id %s\n",
                node.run_id().c_str());
  else
    std::printf("  running for %s s (Ctrl-C stops early)\n",
                Num(node.scenario().duration_s).c_str());
  std::fflush(stdout);
}

}  // namespace

std::string DefaultAgentPath() {
  // Next to trainsim in a build tree: <build>/bench/trainsim/trainsim and
  // <build>/agent/trainscope-agent.
  fs::path self = fs::path(SelfExe()).parent_path();
  for (const fs::path& p :
       {self / "../../agent/trainscope-agent", self / "trainscope-agent"})
    if (fs::exists(p)) return fs::canonical(p).string();
  return "";
}

std::string FakeNvmlLibrary() {
  const fs::path p =
      fs::path(SelfExe()).parent_path() / "../../fake_nvml/libnvidia-ml.so.1";
  return fs::exists(p) ? fs::canonical(p).string() : "";
}

namespace {

// Refuses a run that cannot work, before anything is created.
void CheckRunOptions(const RunOptions& o, const std::string& run_id,
                     bool cluster, const std::string& cli) {
  if (!ValidRunId(run_id))
    throw std::runtime_error("--run-id must be 8 lowercase hex digits, got \"" +
                             run_id + "\"");
  if (o.agent_bin.find('/') != std::string::npos && !fs::exists(o.agent_bin))
    throw std::runtime_error("agent binary not found: " + o.agent_bin);
  if (o.verify && o.agent_bin.empty())
    throw std::runtime_error(
        "verify needs an agent: pass --agent PATH (none found next to "
        "trainsim)");
  if (o.traffic_after_agent_ready && o.agent_bin.empty())
    throw std::runtime_error("--traffic-after-agent-ready needs --agent");
  if (cluster && o.verify && cli.empty())
    throw std::runtime_error(
        "verify of a cluster scenario needs the trainscope CLI for the "
        "cluster view: pass --cli PATH (none found next to trainsim)");
}

// gpu faults speak through the fake NVML (docs/gpu.md): the agent is
// pointed at it unless the caller chose a library.
void UseFakeNvml(const RunOptions& o, const std::string& run_id,
                 AgentSettings& as) {
  as.env.push_back("TRAINSCOPE_FAKE_NVML_CONFIG=" + FakeNvmlPath(run_id));
  const bool chosen = std::any_of(
      o.agent_args.begin(), o.agent_args.end(),
      [](const std::string& a) { return a.rfind("--nvml-library", 0) == 0; });
  const std::string lib = FakeNvmlLibrary();
  if (!chosen && !lib.empty()) {
    as.extra_args.push_back("--nvml-library");
    as.extra_args.push_back(lib);
  }
  if (!chosen && lib.empty())
    spdlog::warn(
        "[trainsim] gpu faults, but no fake NVML library found next to "
        "trainsim (build target fake_nvml); the agent will see no GPU");
}

AgentSettings AgentSettingsFor(const RunOptions& o, const Scenario& scenario,
                               const SimNode& node, const std::string& run_id) {
  const bool cluster = !scenario.nodes.empty();
  AgentSettings as;
  as.binary = o.agent_bin;
  const AgentApiAccess api = node.api_access();
  as.api_url = api.url;
  as.api_ca_file = api.ca_file;
  as.api_token_file = api.token_file;
  as.run_dir = node.run_dir();
  as.interval_s = scenario.interval_s;
  as.first_port = o.agent_port;
  as.extra_args = o.agent_args;
  // Peers on other nodes are named by the agent's default peer watch
  // (--peer-pods-selector=auto), exactly as in the shipped DaemonSet:
  // nothing is passed for it.
  if (cluster) as.node_flags = AskAgent(o.agent_bin).node_flags;
  if (cluster && !as.node_flags)
    spdlog::info(
        "[trainsim] this agent takes no --node-interfaces: node uplinks "
        "are not passed (TRAINSIM_AGENT_NODE_FLAGS=on forces them)");
  if (std::any_of(scenario.faults.begin(), scenario.faults.end(),
                  [](const Fault& f) { return f.kind == FaultKind::kGpu; }))
    UseFakeNvml(o, run_id, as);
  return as;
}

// A cluster's Prometheus, scraping every node's agent.
std::unique_ptr<PrometheusRunner> StartPrometheus(
    const RunOptions& o, const Scenario& scenario, const SimNode& node,
    const std::vector<AgentProcess>& agents) {
  std::vector<PrometheusRunner::Target> targets;
  for (const AgentProcess& a : agents) targets.push_back({a.node, a.port});
  auto prometheus = std::make_unique<PrometheusRunner>(
      node.run_dir() + "/prometheus", targets, scenario.interval_s);
  prometheus->Start(o.prometheus_port ? o.prometheus_port : FreeLoopbackPort());
  return prometheus;
}

// Waits until every agent has listed its pods; false when interrupted.
// Throws with the agents' logs when they do not get ready.
bool AgentsReadyBeforeTraffic(std::vector<AgentProcess>& agents,
                              const SimNode& node, double interval_s) {
  spdlog::info("[trainsim] waiting for the agent before the traffic");
  bool interrupted = false;
  if (WaitForAgentsReady(agents, node.layout(), interval_s, &interrupted))
    return true;
  if (interrupted) return false;
  std::string why;
  for (AgentProcess& a : agents)
    why += "\nagent of " + a.node + " (" +
           (a.process.Running() ? "running" : "exited") + "), its log:\n" +
           LogTail(a.log, 30);
  throw std::runtime_error("the agents did not get ready within 60 s" + why);
}

// `up`: where a caller finds the run (info.json in the run dir).
void WriteRunInfo(const SimNode& node, const std::string& run_id, bool cluster,
                  const std::vector<AgentProcess>& agents,
                  const PrometheusRunner* prometheus) {
  nlohmann::json info = {{"run_id", run_id},
                         {"node", node.layout().node_name},
                         {"api", node.api_url()},
                         {"agent", agents.empty() ? "" : agents[0].url()},
                         {"pid", getpid()}};
  if (cluster) {
    info["nodes"] = nlohmann::json::object();
    for (const SimNodeInfo& n : node.layout().nodes)
      info["nodes"][n.name] = {{"uplink", n.uplink}, {"bridge", n.bridge}};
    info["agents"] = nlohmann::json::object();
    for (const AgentProcess& a : agents) info["agents"][a.node] = a.url();
    if (prometheus) info["prometheus"] = prometheus->url();
  }
  std::ofstream(node.run_dir() + "/info.json") << info.dump() << "\n";
}

struct TimelineEnd {
  bool interrupted = false;
  bool agent_died = false;
};

// The scenario's time: faults on schedule, a poll every interval (verify),
// until the duration is over, a stop signal, or (verify) an agent died.
TimelineEnd RunTimeline(const RunOptions& o, const Scenario& scenario,
                        SimNode& node, std::vector<AgentProcess>& agents,
                        RunObserver& observer, const std::string& run_id,
                        Clock::time_point t0) {
  TimelineEnd end;
  FaultScheduler faults(node);
  double next_poll = scenario.interval_s;
  while (true) {
    const double elapsed =
        std::chrono::duration<double>(Clock::now() - t0).count();
    if (!o.until_stopped && elapsed >= scenario.duration_s) break;
    faults.Tick(elapsed);
    node.TickRestarts();
    for (AgentProcess& a : agents) {
      if (a.died || a.process.Running()) continue;
      a.died = end.agent_died = true;
      spdlog::error("[trainsim] the agent of {} exited early; its log:\n{}",
                    a.node, LogTail(a.log, 30));
    }
    if (o.verify && end.agent_died) break;
    if (o.verify && elapsed >= next_poll) {
      next_poll += scenario.interval_s;
      observer.Poll(elapsed, false);
    }
    // Sleeps here are also where SIGINT/SIGTERM are taken.
    if (WaitForStop(100)) {
      end.interrupted = true;
      spdlog::warn("[trainsim] interrupted: tearing down run {}", run_id);
      break;
    }
  }
  return end;
}

// Keeps the node and agents up after the traffic (--linger); a stop
// signal only ends the wait.
void Linger(double seconds) {
  std::printf("traffic stopped; keeping the node and agent up for %s s\n",
              Num(seconds).c_str());
  std::fflush(stdout);
  const auto until = Clock::now() + std::chrono::milliseconds(
                                        static_cast<int64_t>(seconds * 1000));
  while (Clock::now() < until)
    if (WaitForStop(100)) break;
}

}  // namespace

int RunScenario(const RunOptions& o) {
  // Before any thread exists, so every thread inherits the mask and the
  // signals are only taken by WaitForStop below.
  BlockStopSignals();
  if (geteuid() != 0)
    throw std::runtime_error(
        "trainsim needs root: it creates network namespaces, veths and "
        "cgroups");
  Scenario scenario = LoadScenarioFile(o.scenario_path);
  if (o.duration_s > 0) scenario.duration_s = o.duration_s;
  const bool cluster = !scenario.nodes.empty();
  const std::string run_id = o.run_id.empty() ? NewRunId() : o.run_id;
  const std::string cli = o.cli_bin.empty() ? DefaultCliPath() : o.cli_bin;
  CheckRunOptions(o, run_id, cluster, cli);
  // Program pods read their scenario from the run dir: tell them where the
  // repository (${REPO}) is, found from the scenario's own path.
  setenv("TRAINSIM_REPO",
         FindRepoRoot(fs::path(o.scenario_path).parent_path().string()).c_str(),
         /*overwrite=*/0);
  // A results file of an earlier run must not pass for this one's.
  if (!o.results_json.empty()) {
    std::error_code ec;
    fs::remove(o.results_json, ec);
  }

  // A cluster's agents start before the traffic, as DaemonSet agents run
  // long before a job: each has listed its node's pods and the peers on
  // other nodes when the first byte flows, so no flow starts unnamed.
  const bool agents_first =
      o.traffic_after_agent_ready || (cluster && !o.agent_bin.empty());
  SimNode node(scenario, o.scenario_path, run_id);
  if (!o.kubeconfig.empty())
    node.use_kube_api({.kubeconfig = o.kubeconfig,
                       .agent_service_account = o.agent_service_account,
                       // `up` runs until stopped: a day's token.
                       .token_seconds = o.until_stopped ? 86400 : 3600});
  { std::ofstream(node.run_dir() + "/supervisor.pid") << getpid() << "\n"; }
  if (agents_first)
    node.Prepare();
  else
    node.Up();

  std::vector<AgentProcess> agents;
  std::unique_ptr<PrometheusRunner> prometheus;
  if (!o.agent_bin.empty()) {
    agents =
        StartAgents(AgentSettingsFor(o, scenario, node, run_id), node.layout());
    if (cluster) prometheus = StartPrometheus(o, scenario, node, agents);
  }
  if (agents_first) {
    if (!AgentsReadyBeforeTraffic(agents, node, scenario.interval_s))
      return 130;  // interrupted; ~SimNode tears down
    node.StartPods();
  }
  PrintBanner(node, agents, prometheus.get(), o.until_stopped);
  if (o.until_stopped)
    WriteRunInfo(node, run_id, cluster, agents, prometheus.get());

  RunObserver observer(scenario, node, agents, prometheus.get(), cli);
  const auto t0 = Clock::now();
  const TimelineEnd end =
      RunTimeline(o, scenario, node, agents, observer, run_id, t0);

  // The last reports, while the pods still run: what the agents concluded.
  if (!agents.empty() && !end.agent_died && !end.interrupted)
    observer.Poll(std::chrono::duration<double>(Clock::now() - t0).count(),
                  true);
  node.StopPods();
  const double traffic_stop_epoch_s = EpochNow();
  PrintTruth(node);
  if (o.verify) {
    std::printf("%s", observer.StepRateTable().c_str());
    std::fflush(stdout);
  }
  if (!o.ground_truth_json.empty())
    WriteGroundTruthJson(node, o.ground_truth_json, node.start_epoch_s(),
                         traffic_stop_epoch_s);
  if (o.linger_s > 0 && !end.interrupted) Linger(o.linger_s);
  for (AgentProcess& a : agents) a.process.Stop(std::chrono::seconds(3));
  if (prometheus) prometheus->Stop();
  node.Teardown();
  if (!o.verify) return end.interrupted ? 130 : 0;
  const nlohmann::ordered_json verdict =
      observer.Verdict(end.agent_died || end.interrupted);
  std::printf("%s\n", verdict.dump().c_str());
  std::fflush(stdout);
  if (!o.results_json.empty())
    WriteJsonFile(o.results_json, observer.Results(verdict));
  return verdict["passed"].get<bool>() ? 0 : 1;
}

}  // namespace trainsim
