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

#include "faults.h"
#include "node.h"
#include "pod_process.h"
#include "program_pod.h"
#include "verify_match.h"

namespace trainsim {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;

int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  close(fd);
  if (port == 0) throw std::runtime_error("no free port on 127.0.0.1");
  return port;
}

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

// Waits (bounded) until the agent answers /readyz and lists every pod of
// the scenario in /api/v1/pods, then two more sampling intervals, so at
// least one full cycle has the pods' cgroups and the pod table. false when
// the agent died, was not ready in time, or a stop signal came.
bool WaitForAgentReady(const SimNode& node, Subprocess& agent, int port,
                       double interval_s, bool* interrupted) {
  httplib::Client cli("127.0.0.1", port);
  cli.set_connection_timeout(1);
  cli.set_read_timeout(3);
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  bool ready = false;
  while (!ready) {
    if (Clock::now() > deadline || !agent.Running()) return false;
    if (WaitForStop(200)) {
      *interrupted = true;
      return false;
    }
    auto r = cli.Get("/readyz");
    if (!r || r->status != 200) continue;
    auto pods = cli.Get("/api/v1/pods");
    if (!pods || pods->status != 200) continue;
    ready = std::all_of(node.layout().pods.begin(), node.layout().pods.end(),
                        [&](const SimPod& p) {
                          return pods->body.find("\"" + p.name + "\"") !=
                                 std::string::npos;
                        });
  }
  const auto settle =
      Clock::now() + std::chrono::milliseconds(
                         static_cast<int64_t>(2 * interval_s * 1000 + 200));
  while (Clock::now() < settle) {
    if (!agent.Running()) return false;
    if (WaitForStop(100)) {
      *interrupted = true;
      return false;
    }
  }
  return true;
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
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << j.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0)
    throw std::runtime_error("cannot rename " + tmp + " to " + path);
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
    out += (out.empty() ? "; active: " : ", ") + d.value("kind", "") + "/" +
           d.value("pod", "");
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

  SimNode node(scenario, o.scenario_path, run_id);
  { std::ofstream(node.run_dir() + "/supervisor.pid") << getpid() << "\n"; }
  if (o.traffic_after_agent_ready)
    node.Prepare();
  else
    node.Up();

  Subprocess agent;
  int agent_port = 0;
  if (!o.agent_bin.empty()) {
    agent_port = o.agent_port ? o.agent_port : FreePort();
    std::vector<std::string> args = {o.agent_bin,
                                     "--discovery",
                                     "apiserver",
                                     "--kube-api",
                                     node.api_url(),
                                     "--node-name",
                                     node.layout().node_name,
                                     "--listen",
                                     "127.0.0.1:" + std::to_string(agent_port),
                                     "--interval",
                                     Num(scenario.interval_s)};
    args.insert(args.end(), o.agent_args.begin(), o.agent_args.end());
    std::vector<std::string> env;
    const bool gpu =
        std::any_of(scenario.faults.begin(), scenario.faults.end(),
                    [](const Fault& f) { return f.kind == FaultKind::kGpu; });
    if (gpu) {
      // gpu faults speak through the fake NVML (docs/gpu.md); point the
      // agent at it unless the caller chose a library.
      env.push_back("TRAINSCOPE_FAKE_NVML_CONFIG=" + FakeNvmlPath(run_id));
      const bool chosen = std::any_of(
          o.agent_args.begin(), o.agent_args.end(), [](const std::string& a) {
            return a.rfind("--nvml-library", 0) == 0;
          });
      const std::string lib = FakeNvmlLibrary();
      if (!chosen && !lib.empty()) {
        args.push_back("--nvml-library");
        args.push_back(lib);
      }
      if (!chosen && lib.empty())
        spdlog::warn(
            "[trainsim] gpu faults, but no fake NVML library found next to "
            "trainsim "
            "(build target fake_nvml); the agent will see no GPU");
    }
    agent = Subprocess::Spawn(args, node.run_dir() + "/agent.log", env);
  }
  bool interrupted = false, agent_died = false;
  if (o.traffic_after_agent_ready) {
    spdlog::info("[trainsim] waiting for the agent before the traffic");
    if (!WaitForAgentReady(node, agent, agent_port, scenario.interval_s,
                           &interrupted)) {
      if (interrupted) return 130;  // ~SimNode tears down
      throw std::runtime_error(
          std::string(agent.Running()
                          ? "the agent did not get ready within 60 s"
                          : "the agent exited before it was ready") +
          "; its log:\n" + LogTail(node.run_dir() + "/agent.log", 30));
    }
    node.StartPods();
  }

  std::printf("trainsim run %s: scenario %s, %zu pods on node %s\n",
              run_id.c_str(), scenario.name.c_str(), node.layout().pods.size(),
              node.layout().node_name.c_str());
  std::printf("  Kubernetes API: %s/api/v1/pods\n", node.api_url().c_str());
  if (agent_port) {
    std::printf("  agent metrics:  http://127.0.0.1:%d/metrics\n", agent_port);
    std::printf("  agent report:   http://127.0.0.1:%d/api/v1/report\n",
                agent_port);
    std::printf("  agent log:      %s/agent.log\n", node.run_dir().c_str());
  }
  if (o.until_stopped)
    std::printf("  stop with:      trainsim down --run-id %s\n",
                run_id.c_str());
  else
    std::printf("  running for %s s (Ctrl-C stops early)\n",
                Num(scenario.duration_s).c_str());
  std::fflush(stdout);
  if (o.until_stopped) {
    nlohmann::json info = {
        {"run_id", run_id},
        {"node", node.layout().node_name},
        {"api", node.api_url()},
        {"agent",
         agent_port ? "http://127.0.0.1:" + std::to_string(agent_port) : ""},
        {"pid", getpid()}};
    std::ofstream(node.run_dir() + "/info.json") << info.dump() << "\n";
  }

  FaultScheduler faults(node);
  VerifyTracker tracker(scenario);
  const auto t0 = Clock::now();
  double next_poll = scenario.interval_s;
  while (!interrupted) {
    const double elapsed =
        std::chrono::duration<double>(Clock::now() - t0).count();
    if (!o.until_stopped && elapsed >= scenario.duration_s) break;
    faults.Tick(elapsed);
    if (agent_port && !agent_died && !agent.Running()) {
      agent_died = true;
      spdlog::error("[trainsim] the agent exited early; its log:\n{}",
                    LogTail(node.run_dir() + "/agent.log", 30));
      if (o.verify) break;
    }
    if (o.verify && elapsed >= next_poll) {
      next_poll += scenario.interval_s;
      auto report = FetchReport(agent_port);
      if (report) tracker.Observe(*report, elapsed);
      std::printf("[%5.1fs] %s; expected diagnoses seen: %zu/%zu%s\n", elapsed,
                  report ? "report received" : "no report yet",
                  tracker.DetectedCount(), scenario.expect.size(),
                  report ? ActiveDiagnoses(*report).c_str() : "");
      std::fflush(stdout);
    }
    // Sleeps here are also where SIGINT/SIGTERM are taken.
    if (WaitForStop(100)) {
      interrupted = true;
      spdlog::warn("[trainsim] interrupted: tearing down run {}", run_id);
      break;
    }
  }

  // The last report, while the pods still run: what the agent concluded.
  if (agent_port && !agent_died && !interrupted) {
    if (auto report = FetchReport(agent_port)) {
      tracker.Observe(*report,
                      std::chrono::duration<double>(Clock::now() - t0).count());
      PrintReport(*report);
    }
  }
  node.StopPods();
  const double traffic_stop_epoch_s = EpochNow();
  PrintTruth(node);
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
  agent.Stop(std::chrono::seconds(3));
  node.Teardown();
  if (o.verify) {
    nlohmann::ordered_json result = tracker.ResultJson();
    if (agent_died || interrupted) result["passed"] = false;
    std::printf("%s\n", result.dump().c_str());
    std::fflush(stdout);
    return result["passed"].get<bool>() ? 0 : 1;
  }
  return interrupted ? 130 : 0;
}

}  // namespace trainsim
