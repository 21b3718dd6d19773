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
#include "run_results.h"
#include "step_rates.h"
#include "verify_match.h"

namespace trainsim {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

// The cluster view costs a Prometheus query per metric family and a
// replay of the window: every this many agent polls.
constexpr int kClusterEvery = 3;

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

// GET /api/v1/report; a body that is not JSON counts as no report.
std::optional<nlohmann::json> FetchReport(int port) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(1);
  cli.set_read_timeout(3);
  auto res = cli.Get("/api/v1/report");
  if (!res || res->status != 200) return std::nullopt;
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// "; active: kind/pod, ..." for the warning and critical diagnoses.
std::string ActiveDiagnoses(const nlohmann::json& report) {
  std::string out;
  if (!report.contains("diagnoses") || !report["diagnoses"].is_array())
    return out;
  for (const auto& d : report["diagnoses"]) {
    if (!d.is_object()) continue;
    const std::string severity = d.value("severity", "");
    if (severity != "warning" && severity != "critical") continue;
    const std::string pod = d.value("pod", "");
    // A node-level diagnosis has no pod: show its node.
    out +=
        (out.empty() ? "; active: " : ", ") + d.value("kind", "") + "/" +
        (pod.empty() && d.contains("node") ? "@" + d.value("node", "") : pod);
  }
  return out;
}

// The agent's report as a person reads it: diagnoses, then each job's PS
// traffic shares.
void PrintReport(const nlohmann::json& report) {
  std::printf("\nBottleneck report from the agent:\n");
  const auto& ds = report.value("diagnoses", nlohmann::json::array());
  if (ds.empty()) std::printf("  no diagnoses\n");
  for (const auto& d : ds) {
    if (!d.is_object()) continue;
    std::printf("  %-9s %-31s %-22s %s\n", d.value("severity", "").c_str(),
                d.value("kind", "").c_str(), d.value("pod", "").c_str(),
                d.value("summary", "").c_str());
    if (d.contains("recommendations") && d["recommendations"].is_array())
      for (const auto& r : d["recommendations"])
        if (r.is_string())
          std::printf("  %-9s -> %s\n", "", r.get<std::string>().c_str());
  }
  for (const auto& job : report.value("jobs", nlohmann::json::array())) {
    if (!job.is_object() || !job.contains("ps_traffic_share") ||
        !job["ps_traffic_share"].is_object() || job["ps_traffic_share"].empty())
      continue;
    std::printf(
        "  job %s/%s PS traffic share:", job.value("namespace", "").c_str(),
        job.value("training_job", "").c_str());
    for (const auto& [pod, share] : job["ps_traffic_share"].items())
      if (share.is_number())
        std::printf(" %s=%.2f", pod.c_str(), share.get<double>());
    std::printf("\n");
  }
  std::fflush(stdout);
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
  for (fs::path p :
       {self / "../../agent/trainscope-agent", self / "trainscope-agent"})
    if (fs::exists(p)) return fs::canonical(p).string();
  return "";
}

std::string FakeNvmlLibrary() {
  const fs::path p =
      fs::path(SelfExe()).parent_path() / "../../fake_nvml/libnvidia-ml.so.1";
  return fs::exists(p) ? fs::canonical(p).string() : "";
}

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
  const std::string run_id = o.run_id.empty() ? NewRunId() : o.run_id;
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
  const bool cluster = !scenario.nodes.empty();
  const std::string cli = o.cli_bin.empty() ? DefaultCliPath() : o.cli_bin;
  if (cluster && o.verify && cli.empty())
    throw std::runtime_error(
        "verify of a cluster scenario needs the trainscope CLI for the "
        "cluster view: pass --cli PATH (none found next to trainsim)");

  // A cluster's agents start before the traffic, as DaemonSet agents run
  // long before a job: each has listed its node's pods and the peers on
  // other nodes when the first byte flows, so no flow starts unnamed.
  const bool agents_first =
      o.traffic_after_agent_ready || (cluster && !o.agent_bin.empty());
  SimNode node(scenario, o.scenario_path, run_id);
  { std::ofstream(node.run_dir() + "/supervisor.pid") << getpid() << "\n"; }
  if (agents_first)
    node.Prepare();
  else
    node.Up();

  std::vector<AgentProcess> agents;
  std::unique_ptr<PrometheusRunner> prometheus;
  if (!o.agent_bin.empty()) {
    AgentSettings as;
    as.binary = o.agent_bin;
    as.api_url = node.api_url();
    as.run_dir = node.run_dir();
    as.interval_s = scenario.interval_s;
    as.first_port = o.agent_port;
    as.extra_args = o.agent_args;
    if (cluster) {
      const AgentCapabilities caps = AskAgent(o.agent_bin);
      as.node_flags = caps.node_flags;
      // Peers on other nodes are named by the agent's default peer watch
      // (--peer-pods-selector=auto), exactly as in the shipped DaemonSet:
      // nothing is passed for it.
    }
    if (cluster && !as.node_flags)
      spdlog::info(
          "[trainsim] this agent takes no --node-interfaces: node uplinks "
          "are not passed (TRAINSIM_AGENT_NODE_FLAGS=on forces them)");
    const bool gpu =
        std::any_of(scenario.faults.begin(), scenario.faults.end(),
                    [](const Fault& f) { return f.kind == FaultKind::kGpu; });
    if (gpu) {
      // gpu faults speak through the fake NVML (docs/gpu.md); point the
      // agent at it unless the caller chose a library.
      as.env.push_back("TRAINSCOPE_FAKE_NVML_CONFIG=" + FakeNvmlPath(run_id));
      const bool chosen = std::any_of(
          o.agent_args.begin(), o.agent_args.end(), [](const std::string& a) {
            return a.rfind("--nvml-library", 0) == 0;
          });
      const std::string lib = FakeNvmlLibrary();
      if (!chosen && !lib.empty()) {
        as.extra_args.push_back("--nvml-library");
        as.extra_args.push_back(lib);
      }
      if (!chosen && lib.empty())
        spdlog::warn(
            "[trainsim] gpu faults, but no fake NVML library found next to "
            "trainsim "
            "(build target fake_nvml); the agent will see no GPU");
    }
    agents = StartAgents(as, node.layout());
    if (cluster) {
      std::vector<PrometheusRunner::Target> targets;
      for (const AgentProcess& a : agents) targets.push_back({a.node, a.port});
      prometheus = std::make_unique<PrometheusRunner>(
          node.run_dir() + "/prometheus", targets, scenario.interval_s);
      prometheus->Start(o.prometheus_port ? o.prometheus_port
                                          : FreeLoopbackPort());
    }
  }
  bool interrupted = false;
  if (agents_first) {
    spdlog::info("[trainsim] waiting for the agent before the traffic");
    if (!WaitForAgentsReady(agents, node.layout(), scenario.interval_s,
                            &interrupted)) {
      if (interrupted) return 130;  // ~SimNode tears down
      std::string why;
      for (AgentProcess& a : agents)
        why += "\nagent of " + a.node + " (" +
               (a.process.Running() ? "running" : "exited") + "), its log:\n" +
               LogTail(a.log, 30);
      throw std::runtime_error("the agents did not get ready within 60 s" +
                               why);
    }
    node.StartPods();
  }

  PrintBanner(node, agents, prometheus.get(), o.until_stopped);
  if (o.until_stopped) {
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

  FaultScheduler faults(node);
  VerifyTracker tracker(scenario);
  std::vector<std::string> node_names;
  for (const SimNodeInfo& n : node.layout().nodes) node_names.push_back(n.name);
  ClusterVerify views(scenario, node_names);
  // Steps/s per worker, true and estimated, and the diagnoses' cost
  // figures: sampled at each poll, judged at the end.
  StepRateTracker rates(scenario);
  DiagnosisLog diagnoses;
  bool agent_died = false;
  const auto t0 = Clock::now();
  // Called each interval: every agent's report, and every few intervals the
  // cluster view (a Prometheus query per family, so less often).
  int polls = 0;
  auto observe = [&](double elapsed, bool final_poll) {
    std::string status;
    size_t got = 0;
    for (const auto& [pod, c] : ReadStepCounts(node.run_dir() + "/stats"))
      rates.ObserveTruth(pod, elapsed, c.steps,
                         c.last_step_epoch_s > 0
                             ? std::optional<double>(c.last_step_epoch_s)
                             : std::nullopt);
    for (AgentProcess& a : agents) {
      if (a.died) continue;
      auto report = FetchReport(a.port);
      if (!report) continue;
      ++got;
      rates.ObserveAgent(*report, elapsed);
      diagnoses.Observe(*report, elapsed);
      if (cluster)
        views.Observe(a.node, *report, elapsed);
      else
        tracker.Observe(*report, elapsed);
      // One line per poll: in a cluster, each node's active diagnoses.
      const std::string active = ActiveDiagnoses(*report);
      status += cluster && !active.empty() ? " | " + a.node + active : active;
      if (final_poll && !cluster) PrintReport(*report);
    }
    if (cluster && prometheus && (final_poll || polls % kClusterEvery == 0)) {
      std::string error;
      auto report = ClusterReport(cli, prometheus->url(), elapsed + 30,
                                  scenario.interval_s, &error);
      if (report) {
        views.Observe(ClusterVerify::kClusterView, *report, elapsed);
        diagnoses.Observe(*report, elapsed);
        status += " | cluster" + ActiveDiagnoses(*report);
        if (final_poll) PrintReport(*report);
      } else {
        spdlog::warn("[trainsim] cluster report failed: {}", error);
      }
      auto triaged =
          ClusterReport(cli, prometheus->url(), elapsed + 30,
                        scenario.interval_s, &error, {"--triage", "on"});
      if (triaged) {
        views.Observe(ClusterVerify::kClusterTriageView, *triaged, elapsed);
      } else {
        spdlog::warn("[trainsim] triaged cluster report failed: {}", error);
      }
    }
    ++polls;
    if (final_poll) return;
    std::printf("[%5.1fs] %s; expected diagnoses seen: %zu/%zu%s\n", elapsed,
                got ? "report received" : "no report yet",
                cluster ? views.DetectedCount() : tracker.DetectedCount(),
                scenario.expect.size(), status.c_str());
    std::fflush(stdout);
  };
  double next_poll = scenario.interval_s;
  while (!interrupted) {
    const double elapsed =
        std::chrono::duration<double>(Clock::now() - t0).count();
    if (!o.until_stopped && elapsed >= scenario.duration_s) break;
    faults.Tick(elapsed);
    for (AgentProcess& a : agents) {
      if (a.died || a.process.Running()) continue;
      a.died = agent_died = true;
      spdlog::error("[trainsim] the agent of {} exited early; its log:\n{}",
                    a.node, LogTail(a.log, 30));
    }
    if (o.verify && agent_died) break;
    if (o.verify && elapsed >= next_poll) {
      next_poll += scenario.interval_s;
      observe(elapsed, false);
    }
    // Sleeps here are also where SIGINT/SIGTERM are taken.
    if (WaitForStop(100)) {
      interrupted = true;
      spdlog::warn("[trainsim] interrupted: tearing down run {}", run_id);
      break;
    }
  }

  // The last reports, while the pods still run: what the agents concluded.
  if (!agents.empty() && !agent_died && !interrupted)
    observe(std::chrono::duration<double>(Clock::now() - t0).count(), true);
  node.StopPods();
  const double traffic_stop_epoch_s = EpochNow();
  PrintTruth(node);
  if (o.verify) {
    std::printf("%s", rates.Table().c_str());
    std::fflush(stdout);
  }
  if (!o.ground_truth_json.empty())
    WriteGroundTruthJson(node, o.ground_truth_json, node.start_epoch_s(),
                         traffic_stop_epoch_s);
  if (o.linger_s > 0 && !interrupted) {
    std::printf("traffic stopped; keeping the node and agent up for %s s\n",
                Num(o.linger_s).c_str());
    std::fflush(stdout);
    const auto until =
        Clock::now() +
        std::chrono::milliseconds(static_cast<int64_t>(o.linger_s * 1000));
    while (Clock::now() < until)
      if (WaitForStop(100)) break;  // a stop signal only ends the wait
  }
  for (AgentProcess& a : agents) a.process.Stop(std::chrono::seconds(3));
  if (prometheus) prometheus->Stop();
  node.Teardown();
  if (o.verify) {
    nlohmann::ordered_json result =
        cluster ? views.ResultJson() : tracker.ResultJson();
    result["step_rates"] = rates.ResultJson();
    if (!result["step_rates"]["passed"].get<bool>()) result["passed"] = false;
    if (agent_died || interrupted) result["passed"] = false;
    std::printf("%s\n", result.dump().c_str());
    std::fflush(stdout);
    if (!o.results_json.empty())
      WriteJsonFile(o.results_json,
                    RunResultsJson(scenario, rates, diagnoses, result));
    return result["passed"].get<bool>() ? 0 : 1;
  }
  return interrupted ? 130 : 0;
}

}  // namespace trainsim
