// trainsim: a simulated training node. See docs/trainsim.md.
#include <signal.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "cleanup.h"
#include "faults.h"
#include "hungfs.h"
#include "layout.h"
#include "node.h"
#include "placement.h"
#include "pod_process.h"
#include "scenario.h"
#include "supervisor.h"
#include "whatif.h"

namespace fs = std::filesystem;
using namespace trainsim;

namespace {

void PrintPlan(const Scenario& s) {
  Layout layout = MakeLayout(s, "00000000");
  std::printf("scenario %s: %zu pods, %g s, agent interval %g s\n",
              s.name.c_str(), layout.pods.size(), s.duration_s, s.interval_s);
  for (const Job& job : s.jobs) {
    auto bytes = BytesPerPs(job, PlaceVariables(job));
    std::printf("  job %s/%s: %d ps, %d workers, %s placement, bytes per PS:",
                job.namespace_name.c_str(), job.name.c_str(), job.ps,
                job.workers,
                std::string(StrategyName(job.placement.strategy)).c_str());
    for (uint64_t b : bytes)
      std::printf(" %llu", static_cast<unsigned long long>(b));
    std::printf("\n");
  }
  for (const SimPod& p : layout.pods) {
    if (layout.cluster())
      std::printf("  %-24s %-16s %s\n", p.name.c_str(), p.ip.c_str(),
                  layout.NodeOf(p).name.c_str());
    else
      std::printf("  %-24s %s\n", p.name.c_str(), p.ip.c_str());
  }
}

// `up`: the supervisor detaches and keeps the node running; we wait until
// it reports ready (or dies) and print where things are.
int Up(RunOptions o) {
  if (o.run_id.empty()) o.run_id = NewRunId();
  const std::string dir = RunDir(o.run_id);
  fs::create_directories(dir);
  const std::string log = dir + "/supervisor.log";
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    setsid();
    std::freopen(log.c_str(), "a", stdout);
    std::freopen(log.c_str(), "a", stderr);
    std::freopen("/dev/null", "r", stdin);
    int rc = 1;
    try {
      rc = RunScenario(o);
    } catch (const std::exception& e) {
      spdlog::error("[trainsim] {}", e.what());
      CleanupRun(o.run_id, false);
    }
    _exit(rc);
  }
  for (int i = 0; i < 1200; ++i) {
    if (fs::exists(dir + "/info.json")) {
      std::ifstream in(log);
      std::cout << in.rdbuf();
      return 0;
    }
    int status;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      std::ifstream in(log);
      std::cerr << in.rdbuf();
      std::error_code ec;
      fs::remove_all(dir, ec);
      return 1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::fprintf(stderr, "trainsim up: not ready after 120 s; see %s\n",
               log.c_str());
  return 1;
}

int Cleanup(const std::string& run_id, bool force, bool down) {
  std::vector<std::string> ids =
      run_id.empty() ? LeftoverRunIds() : std::vector<std::string>{run_id};
  int rc = 0;
  for (const std::string& id : ids) {
    if (!down && !force && SupervisorPid(id) > 0) {
      std::printf(
          "run %s is alive (supervisor pid %d): use `trainsim down --run-id "
          "%s` "
          "or --force\n",
          id.c_str(), SupervisorPid(id), id.c_str());
      continue;
    }
    auto left = CleanupRun(id, false);
    std::printf("run %s: %s\n", id.c_str(),
                left.empty() ? "removed" : "incomplete");
    for (const std::string& l : left) std::printf("  left: %s\n", l.c_str());
    if (!left.empty()) rc = 1;
  }
  if (ids.empty()) std::printf("nothing of trainsim on this machine\n");
  return rc;
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_object()) throw std::runtime_error(path + ": not a JSON object");
  return j;
}

int WhatIf(const std::string& results, const std::string& fixed,
           const std::string& kind, const std::string& pod, double tolerance) {
  const nlohmann::json diagnosed = ReadJson(results);
  std::optional<nlohmann::json> after;
  if (!fixed.empty()) after = ReadJson(fixed);
  WhatIfResult r;
  try {
    r = CompareWhatIf(diagnosed, after ? &*after : nullptr, kind, pod,
                      tolerance);
  } catch (const std::runtime_error& e) {
    std::printf("what-if %s on %s: cannot compare: %s\n", kind.c_str(),
                pod.c_str(), e.what());
    return 1;
  }
  std::printf(
      "what-if %s on %s (job %s): predicted speed-up %.3f, measured %.3f "
      "(%s), error %+.1f%% (tolerance %.0f%%): %s\n",
      kind.c_str(), pod.c_str(), r.job.c_str(), r.predicted, r.measured,
      r.measured_as.c_str(), r.error * 100, tolerance * 100,
      r.passed ? "PASS" : "FAIL");
  return r.passed ? 0 : 1;
}

int Scaling(const std::string& forecast, const std::vector<std::string>& runs,
            const std::string& kind, const std::string& pod, double tolerance) {
  std::vector<nlohmann::json> more;
  for (const auto& path : runs) more.push_back(ReadJson(path));
  ScalingResult r;
  try {
    r = CompareScaling(ReadJson(forecast), more, kind, pod, tolerance);
  } catch (const std::runtime_error& e) {
    std::printf("scaling %s on %s: cannot compare: %s\n", kind.c_str(),
                pod.c_str(), e.what());
    return 1;
  }
  std::printf(
      "scaling %s on %s (job %s): forecast with %zu workers: the step rate "
      "stops growing at %.2f steps/s (%.1f workers); measured plateau %.2f "
      "steps/s (%s), error %+.1f%% (tolerance %.0f%%): %s\n",
      kind.c_str(), pod.c_str(), r.job.c_str(), r.workers, r.forecast,
      r.forecast_workers, r.plateau, r.plateau_run.c_str(), r.error * 100,
      tolerance * 100, r.passed ? "PASS" : "FAIL");
  return r.passed ? 0 : 1;
}

// What the user's subcommands read.
struct UserArgs {
  RunOptions run;
  std::string whatif_results, whatif_fixed, whatif_kind, whatif_pod;
  double whatif_tolerance = 0.25;
  std::vector<std::string> scaling_runs;
  std::string run_id;  // down, cleanup
  bool force = false;
};

// What the processes trainsim starts inside a pod read.
struct PodArgs {
  PodProcessArgs process;
  std::string netns;
  std::vector<std::string> cgroups;
  int threads = 1;
  uint64_t bytes = 0;
  std::string mountpoint;  // __hungfs
};

struct Commands {
  CLI::App *run, *verify, *whatif, *scaling, *up, *down, *cleanup, *validate;
  CLI::App *pod, *hog, *memfill, *hungfs;
};

void AddRunFlags(CLI::App* cmd, RunOptions& ro, bool needs_agent_default) {
  cmd->add_option("--scenario", ro.scenario_path, "scenario JSON file")
      ->required()
      ->check(CLI::ExistingFile);
  cmd->add_option(
      "--agent", ro.agent_bin,
      needs_agent_default
          ? "trainscope-agent binary (default: the one in this build tree)"
          : "trainscope-agent binary to start (optional)");
  cmd->add_option(
      "--agent-arg", ro.agent_args,
      "extra agent flag, repeatable; write --agent-arg=--flag=value");
  cmd->add_option("--agent-port", ro.agent_port,
                  "agent listen port on 127.0.0.1 (default: a free one; a "
                  "cluster's agents take consecutive ports from here)");
  cmd->add_option("--run-id", ro.run_id,
                  "8 lowercase hex digits (default: random)");
  cmd->add_option("--cli", ro.cli_bin,
                  "trainscope CLI for the cluster view of scenarios with "
                  "nodes (default: the one in this build tree)");
  cmd->add_option("--prometheus-port", ro.prometheus_port,
                  "port of the cluster run's Prometheus on 127.0.0.1 "
                  "(default: a free one)");
  cmd->add_option("--kubeconfig", ro.kubeconfig,
                  "create the nodes and pods in this kubeconfig's API server "
                  "(bearer token, TLS) instead of a fake one, and delete "
                  "them at the end")
      ->check(CLI::ExistingFile);
  cmd->add_option("--agent-service-account", ro.agent_service_account,
                  "with --kubeconfig: the agents use a token of this "
                  "ServiceAccount (NS/NAME, default "
                  "trainscope/trainscope-agent; \"\" = the kubeconfig's "
                  "token)");
  cmd->add_option("--duration", ro.duration_s,
                  "seconds to run instead of the scenario's duration_s")
      ->check(CLI::PositiveNumber);
}

void AddScenarioCommands(CLI::App& app, RunOptions& ro, Commands& c) {
  c.run = app.add_subcommand(
      "run", "run a scenario for duration_s, print the bytes per peer");
  AddRunFlags(c.run, ro, false);
  // For accuracy tests of the agent against the ground truth (`run` only).
  c.run->add_flag("--traffic-after-agent-ready", ro.traffic_after_agent_ready,
                  "start the traffic only once the agent is ready and has "
                  "sampled two more intervals (needs --agent)");
  c.run->add_option("--ground-truth-json", ro.ground_truth_json,
                    "after the traffic stopped, write the per-pod, per-peer "
                    "bytes and their time window to this JSON file");
  c.run
      ->add_option("--linger", ro.linger_s,
                   "keep the node and agent up S seconds after the traffic "
                   "stopped (SIGTERM ends it early)")
      ->check(CLI::NonNegativeNumber);
  c.verify = app.add_subcommand(
      "verify",
      "run a scenario with the agent; exit 0 when its report matches expect");
  AddRunFlags(c.verify, ro, true);
  c.verify->add_option("--results", ro.results_json,
                       "write the run's results (true and estimated steps/s, "
                       "diagnoses with their cost figures) to this JSON file");
  c.up = app.add_subcommand("up", "start a simulated node in the background");
  AddRunFlags(c.up, ro, false);
  c.validate = app.add_subcommand("validate",
                                  "check a scenario and print its placement");
  c.validate->add_option("--scenario", ro.scenario_path)->required();
}

void AddWhatIfCommand(CLI::App& app, UserArgs& a, Commands& c) {
  c.whatif = app.add_subcommand(
      "whatif",
      "compare a diagnosis's expected_speedup with the measured speed-up of "
      "`verify --results` files; exit 0 when within the tolerance");
  c.whatif
      ->add_option("--results", a.whatif_results,
                   "results of the run with the diagnosis")
      ->required()
      ->check(CLI::ExistingFile);
  c.whatif
      ->add_option("--fixed", a.whatif_fixed,
                   "results of the same job with the fix (default: compare "
                   "the run before its first fault with its last minute)")
      ->check(CLI::ExistingFile);
  c.whatif->add_option("--kind", a.whatif_kind, "diagnosis kind")->required();
  c.whatif->add_option("--pod", a.whatif_pod, "diagnosed pod")->required();
  c.whatif->add_option("--tolerance", a.whatif_tolerance,
                       "allowed |predicted - measured| / measured (0.25)");
}

void AddScalingCommand(CLI::App& app, UserArgs& a, Commands& c) {
  c.scaling = app.add_subcommand(
      "scaling",
      "compare a diagnosis's scaling forecast (evidence.headroom) with the "
      "step rate the job reached with more workers; exit 0 when within the "
      "tolerance");
  c.scaling
      ->add_option("--forecast", a.whatif_results,
                   "`verify --results` of the run whose forecast is checked")
      ->required()
      ->check(CLI::ExistingFile);
  c.scaling
      ->add_option("--runs", a.scaling_runs,
                   "results of the same job with more workers (repeatable)")
      ->required()
      ->check(CLI::ExistingFile);
  c.scaling->add_option("--kind", a.whatif_kind, "diagnosis kind")->required();
  c.scaling->add_option("--pod", a.whatif_pod, "diagnosed pod")->required();
  c.scaling->add_option("--tolerance", a.whatif_tolerance,
                        "allowed |forecast - plateau| / plateau (0.25)");
}

void AddCleanupCommands(CLI::App& app, UserArgs& a, Commands& c) {
  c.down = app.add_subcommand(
      "down", "stop `up` runs (all, or --run-id) and remove everything");
  c.down->add_option("--run-id", a.run_id);
  c.cleanup = app.add_subcommand("cleanup", "remove leftovers of crashed runs");
  c.cleanup->add_option("--run-id", a.run_id);
  c.cleanup->add_flag("--force", a.force,
                      "also stop runs whose supervisor is alive");
}

// Internal: the processes trainsim starts inside a pod (hidden from --help).
void AddPodCommands(CLI::App& app, PodArgs& a, Commands& c) {
  auto add_pod_flags = [&](CLI::App* cmd) {
    cmd->group("");
    cmd->add_option("--netns", a.netns)->required();
    cmd->add_option("--cgroup", a.cgroups);
  };
  c.pod = app.add_subcommand("__pod");
  add_pod_flags(c.pod);
  PodProcessArgs& pa = a.process;
  c.pod->add_option("--scenario", pa.scenario_path)->required();
  c.pod->add_option("--run-id", pa.run_id)->required();
  c.pod->add_option("--pod", pa.pod)->required();
  c.pod->add_option("--stats", pa.stats_path)->required();
  c.pod->add_option("--input-dir", pa.input_dir)->required();
  c.pod->add_option("--start-epoch", pa.start_epoch_s)->required();
  c.hog = app.add_subcommand("__hog");
  add_pod_flags(c.hog);
  c.hog->add_option("--threads", a.threads);
  c.memfill = app.add_subcommand("__memfill");
  add_pod_flags(c.memfill);
  c.memfill->add_option("--bytes", a.bytes)->required();
  // The blocked_io fault's hung file system; runs on the host, not in a pod.
  c.hungfs = app.add_subcommand("__hungfs");
  c.hungfs->add_option("mountpoint", a.mountpoint)->required();
}

int RunPodCommand(const Commands& c, const PodArgs& a) {
  EnterPod(a.netns, a.cgroups);
  if (*c.pod) return RunPodProcess(a.process);
  if (*c.hog) return RunCpuHog(a.threads);
  return RunMemoryFill(a.bytes);
}

int RunUserCommand(const Commands& c, UserArgs& a) {
  RunOptions& ro = a.run;
  if (*c.whatif) {
    return WhatIf(a.whatif_results, a.whatif_fixed, a.whatif_kind, a.whatif_pod,
                  a.whatif_tolerance);
  }
  if (*c.scaling) {
    return Scaling(a.whatif_results, a.scaling_runs, a.whatif_kind,
                   a.whatif_pod, a.whatif_tolerance);
  }
  if (*c.validate) {
    PrintPlan(LoadScenarioFile(ro.scenario_path));
    return 0;
  }
  if (*c.run) return RunScenario(ro);
  if (*c.verify) {
    ro.verify = true;
    if (ro.agent_bin.empty()) ro.agent_bin = DefaultAgentPath();
    return RunScenario(ro);
  }
  if (*c.up) {
    ro.until_stopped = true;
    return Up(ro);
  }
  if (*c.down) return Cleanup(a.run_id, true, true);
  if (*c.cleanup) return Cleanup(a.run_id, a.force, false);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  spdlog::set_default_logger(spdlog::stderr_color_mt("trainsim"));
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ %v");
  CLI::App app{
      "trainsim: a simulated distributed-training node (docs/trainsim.md)"};
  app.require_subcommand(1);
  std::string log_level = "info";
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error");
  UserArgs user;
  PodArgs pod;
  Commands commands{};
  AddScenarioCommands(app, user.run, commands);
  AddWhatIfCommand(app, user, commands);
  AddScalingCommand(app, user, commands);
  AddCleanupCommands(app, user, commands);
  AddPodCommands(app, pod, commands);

  CLI11_PARSE(app, argc, argv);
  spdlog::set_level(spdlog::level::from_str(log_level));
  try {
    if (*commands.hungfs) return RunHungFs(pod.mountpoint);
    if (*commands.pod || *commands.hog || *commands.memfill) {
      return RunPodCommand(commands, pod);
    }
    return RunUserCommand(commands, user);
  } catch (const ScenarioError& e) {
    spdlog::error("[trainsim] invalid scenario: {}", e.what());
    return 2;
  } catch (const std::exception& e) {
    spdlog::error("[trainsim] {}", e.what());
    return 1;
  }
}
