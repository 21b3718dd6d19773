// Real netns, cgroups, tc and traffic. Root only; each test cleans up by run
// id in TearDown, so a failing assertion leaves nothing behind either.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

#include "cgroups.h"
#include "cleanup.h"
#include "exec.h"
#include "faults.h"
#include "node.h"
#include "scenario_run_fixture.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr const char* kScenario = R"({
  "name": "priv-2ps-3w", "duration_s": 4, "interval_s": 1,
  "jobs": [{"namespace": "training", "name": "tj", "labels": "kubeflow",
            "ps": 2, "workers": 3, "port": 2222, "step_ms": 100, "compute_ms": 5,
            "variables": [{"name": "embedding", "bytes": 300000},
                          {"name": "dense", "bytes": 20000, "count": 3}],
            "placement": {"strategy": "round_robin"},
            "resources": {"ps": {"cpu_limit_cores": 0.5, "memory_limit_bytes": 134217728},
                          "worker": {"cpu_limit_cores": 0.3}}}],
  "faults": [{"kind": "bandwidth_limit", "pod": "tj-ps-1", "mbit": 50, "start_s": 0},
             {"kind": "cpu_limit", "pod": "tj-worker-2", "cores": 0.1, "start_s": 0},
             {"kind": "gpu", "pod": "tj-worker-1", "utilization": 0.05, "memory_bytes": 1048576, "start_s": 0}]
})";

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

bool Contains(const std::string& hay, const std::string& needle) {
  return hay.find(needle) != std::string::npos;
}

class TrainsimPrivilegedTest : public ScenarioRunTest {
 protected:
  TrainsimPrivilegedTest() : ScenarioRunTest(kScenario, "trainsim-priv-") {}

  // Nothing of the run anywhere: netns, links, cgroups, files.
  void ExpectNothingLeft() {
    const auto ids = LeftoverRunIds();
    EXPECT_EQ(std::count(ids.begin(), ids.end(), run_id_), 0)
        << "run " << run_id_ << " left things";
    EXPECT_FALSE(Contains(RunCommand({"ip", "netns", "list"}).output,
                          "trainsim-" + run_id_));
    EXPECT_FALSE(
        Contains(RunCommand({"ip", "link", "show"}).output, "ts" + run_id_));
    for (const Hierarchy& h : DetectHierarchies()) {
      std::error_code ec;
      for (const auto& e : fs::directory_iterator(
               h.root + "/kubepods.slice/kubepods-burstable.slice", ec))
        EXPECT_FALSE(Contains(e.path().string(), "pod" + run_id_)) << e.path();
    }
    EXPECT_FALSE(fs::exists(RunDir(run_id_)));
    EXPECT_FALSE(fs::exists(InputDir(run_id_)));
  }
};

// The whole run through the binary: traffic flows between every worker and
// both PS, and both ends of each connection count the same bytes.
TEST_F(TrainsimPrivilegedTest, RunTwoPsThreeWorkersGroundTruthConsistent) {
  CommandResult r = RunCommand(
      {TRAINSIM_BIN, "run", "--scenario", scenario_path_, "--run-id", run_id_},
      std::chrono::seconds(60));
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "both ends of every connection agree"))
      << r.output;
  EXPECT_FALSE(Contains(r.output, "MISMATCH")) << r.output;

  // Parse the table: pod peer sent received.
  std::map<std::pair<std::string, std::string>, std::pair<uint64_t, uint64_t>>
      rows;
  std::regex row(R"(^(tj-\S+)\s+(tj-\S+)\s+(\d+)\s+(\d+)$)");
  std::istringstream out(r.output);
  for (std::string line; std::getline(out, line);) {
    std::smatch m;
    if (std::regex_match(line, m, row))
      rows[{m[1], m[2]}] = {std::stoull(m[3]), std::stoull(m[4])};
  }
  for (const std::string ps : {"tj-ps-0", "tj-ps-1"}) {
    for (const std::string w : {"tj-worker-0", "tj-worker-1", "tj-worker-2"}) {
      ASSERT_TRUE(rows.count({ps, w})) << ps << " " << w << "\n" << r.output;
      auto [ps_tx, ps_rx] = rows[{ps, w}];
      auto [w_tx, w_rx] = rows[{w, ps}];
      EXPECT_GT(ps_tx, 0u);
      EXPECT_GT(ps_rx, 0u);  // gradients
      EXPECT_EQ(ps_tx, w_rx) << ps << "->" << w;
      EXPECT_EQ(w_tx, ps_rx) << w << "->" << ps;
    }
  }
  EXPECT_FALSE(
      rows.count({"tj-ps-0", "tj-ps-1"}));  // PS never talk to each other
  // ps-0 holds embedding + dense_1 (320 KB), ps-1 dense_0 + dense_2 (40 KB).
  const uint64_t hot = rows[{"tj-ps-0", "tj-worker-0"}].first;
  const uint64_t cold = rows[{"tj-ps-1", "tj-worker-0"}].first;
  EXPECT_GT(hot, 4 * cold);
  ExpectNothingLeft();
}

// Inside a live node: cgroups in every hierarchy with the limits, the pod
// process in its container cgroup and netns, faults on tc and CPU quota,
// the API listing the pods; then teardown leaves nothing.
TEST_F(TrainsimPrivilegedTest, NodeCgroupsNetworkFaultsAndApi) {
  {
    SimNode node(LoadScenarioFile(scenario_path_), scenario_path_, run_id_);
    node.set_exe(TRAINSIM_BIN);
    node.Up();
    const SimPod& ps0 = *node.layout().Find("tj-ps-0");
    const SimPod& w2 = *node.layout().Find("tj-worker-2");
    const pid_t pid = node.PodPid(ps0.name);
    ASSERT_GT(pid, 0);
    // The child joins its cgroups right after exec: wait for it (at most
    // 10 s; a fixed pause is a guess on two loaded cores).
    const auto dirs = node.cgroups().ContainerDirs(ps0);
    const auto joined = [&] {
      return std::all_of(dirs.begin(), dirs.end(), [&](const std::string& d) {
        return Contains(ReadAll(d + "/cgroup.procs"), std::to_string(pid));
      });
    };
    for (int i = 0; i < 200 && !joined(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    for (const std::string& dir : dirs) {
      ASSERT_TRUE(fs::exists(dir)) << dir;
      EXPECT_TRUE(Contains(ReadAll(dir + "/cgroup.procs"), std::to_string(pid)))
          << dir;
    }
    for (const Hierarchy& h : node.cgroups().hierarchies()) {
      const std::string d = h.root + "/" + PodCgroupPath(ps0);
      if (h.controllers.count("cpu")) {
        EXPECT_EQ(ReadAll(d + (h.v2 ? "/cpu.max" : "/cpu.cfs_quota_us")),
                  h.v2 ? "50000 100000\n" : "50000\n");
      }
      if (h.controllers.count("memory")) {
        EXPECT_EQ(
            ReadAll(d + (h.v2 ? "/memory.max" : "/memory.limit_in_bytes")),
            "134217728\n");
      }
    }
    EXPECT_NE(fs::read_symlink("/proc/" + std::to_string(pid) + "/ns/net"),
              fs::read_symlink("/proc/self/ns/net"));
    CommandResult addr =
        RunCommand({"ip", "-n", ps0.netns, "-4", "addr", "show", "eth0"});
    EXPECT_TRUE(Contains(addr.output, ps0.ip + "/15")) << addr.output;
    CommandResult route =
        RunCommand({"ip", "-n", ps0.netns, "route", "show", "default"});
    EXPECT_EQ(route.output, "");  // no way off the machine

    FaultScheduler faults(node);
    faults.Tick(0);
    EXPECT_TRUE(Contains(RunCommand({"tc", "qdisc", "show", "dev",
                                     node.layout().Find("tj-ps-1")->host_veth})
                             .output,
                         "tbf"));
    EXPECT_TRUE(
        Contains(RunCommand({"tc", "-n", node.layout().Find("tj-ps-1")->netns,
                             "qdisc", "show", "dev", "eth0"})
                     .output,
                 "tbf"));
    for (const Hierarchy& h : node.cgroups().hierarchies()) {
      if (!h.controllers.count("cpu")) continue;
      EXPECT_EQ(ReadAll(h.root + "/" + ContainerCgroupPath(w2) +
                        (h.v2 ? "/cpu.max" : "/cpu.cfs_quota_us")),
                h.v2 ? "10000 100000\n" : "10000\n");
    }

    // gpu: the fake NVML sees the pod's traffic process on one GPU.
    std::ifstream nvml(FakeNvmlPath(run_id_));
    json gpu = json::parse(nvml);
    ASSERT_EQ(gpu["devices"].size(), 1u);
    EXPECT_EQ(gpu["devices"][0]["processes"][0]["pid"],
              node.PodPid("tj-worker-1"));
    EXPECT_EQ(gpu["devices"][0]["utilization_gpu"], 5);

    httplib::Client cli(node.api_url());
    auto res = cli.Get("/api/v1/pods?fieldSelector=spec.nodeName%3D" +
                       node.layout().node_name);
    ASSERT_TRUE(res);
    json list = json::parse(res->body);
    ASSERT_EQ(list["items"].size(), 5u);
    for (const json& pod : list["items"]) {
      if (pod["metadata"]["name"] == "tj-ps-1") {
        EXPECT_EQ(
            pod["metadata"]["annotations"]["kubernetes.io/egress-bandwidth"],
            "50M");
      }
      if (pod["metadata"]["name"] == "tj-worker-2") {
        EXPECT_EQ(pod["spec"]["containers"][0]["resources"]["limits"]["cpu"],
                  "100m");
      }
    }
    std::this_thread::sleep_for(std::chrono::seconds(1));
    node.StopPods();
    const GroundTruth truth = node.Truth();
    EXPECT_GT(truth.at("tj-worker-0").at("tj-ps-0").rx, 0u);
    EXPECT_TRUE(Inconsistencies(truth).empty());
  }  // ~SimNode tears down
  ExpectNothingLeft();
}

// memory_fill, cpu_hog and input_read act on the pods' cgroups for real.
TEST_F(TrainsimPrivilegedTest, FaultsReachTheKernel) {
#ifdef TRAINSCOPE_TEST_UNDER_TSAN
  GTEST_SKIP() << "a memory-hog pod must touch half its limit in time: under "
                  "TSan its allocator and slowdown decide";
#endif
  std::ofstream(scenario_path_) << R"({"name": "faults", "duration_s": 10,
    "jobs": [{"name": "fk", "ps": 1, "workers": 2, "step_ms": 100, "compute_ms": 5,
      "variables": [{"name": "w", "bytes": 50000}],
      "resources": {"ps": {"memory_limit_bytes": 67108864}, "worker": {"cpu_limit_cores": 0.5}}}],
    "faults": [{"kind": "memory_fill", "pod": "fk-ps-0", "ratio_of_limit": 0.5},
               {"kind": "cpu_hog", "pod": "fk-worker-0", "threads": 1},
               {"kind": "input_read", "pod": "fk-worker-1", "bytes_per_step": 1048576, "mbit": 200}]})";
  {
    SimNode node(LoadScenarioFile(scenario_path_), scenario_path_, run_id_);
    node.set_exe(TRAINSIM_BIN);
    node.Up();
    FaultScheduler faults(node);
    faults.Tick(0);
    std::this_thread::sleep_for(std::chrono::milliseconds(2500));
    const Layout& l = node.layout();
    for (const Hierarchy& h : node.cgroups().hierarchies()) {
      if (h.controllers.count("memory")) {
        const std::string d =
            h.root + "/" + ContainerCgroupPath(*l.Find("fk-ps-0"));
        const uint64_t used = std::stoull(
            ReadAll(d + (h.v2 ? "/memory.current" : "/memory.usage_in_bytes")));
        EXPECT_GT(used, 32u << 20) << d;
      }
      // The hog is a second process in the worker's container.
      const std::string hog =
          h.root + "/" + ContainerCgroupPath(*l.Find("fk-worker-0"));
      std::istringstream procs(ReadAll(hog + "/cgroup.procs"));
      int n = 0;
      for (std::string line; std::getline(procs, line);) ++n;
      EXPECT_EQ(n, 2) << hog;
      if (!BlockDeviceOf(InputDir(run_id_)).empty() &&
          ((!h.v2 && h.controllers.count("blkio")) ||
           (h.v2 && h.controllers.count("io")))) {
        const std::string d =
            h.root + "/" + ContainerCgroupPath(*l.Find("fk-worker-1"));
        const std::string stat = ReadAll(
            d + (h.v2 ? "/io.stat" : "/blkio.throttle.io_service_bytes"));
        std::smatch m;
        ASSERT_TRUE(std::regex_search(
            stat, m, std::regex(h.v2 ? R"(rbytes=(\d+))" : R"(Read (\d+))")))
            << stat;
        EXPECT_GT(std::stoull(m[1]), 1u << 20) << stat;
      }
    }
  }
  ExpectNothingLeft();
}

// A supervisor killed with SIGKILL cannot tear down; its pod processes die
// with it (PDEATHSIG) and `trainsim cleanup` removes the rest.
TEST_F(TrainsimPrivilegedTest, SigkillThenCleanupLeavesNothing) {
  Subprocess run = Subprocess::Spawn(
      {TRAINSIM_BIN, "run", "--scenario", scenario_path_, "--run-id", run_id_},
      dir_ + "/run.log");
  const std::string stats = RunDir(run_id_) + "/stats/tj-worker-0.json";
  for (int i = 0; i < 100 && !fs::exists(stats); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_TRUE(fs::exists(stats)) << ReadAll(dir_ + "/run.log");
  kill(run.pid(), SIGKILL);
  run.Stop(std::chrono::milliseconds(0));  // reap
  const auto ids = LeftoverRunIds();
  EXPECT_EQ(std::count(ids.begin(), ids.end(), run_id_), 1)
      << "nothing to clean up?";

  CommandResult r =
      RunCommand({TRAINSIM_BIN, "cleanup"}, std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(Contains(r.output, "run " + run_id_ + ": removed")) << r.output;
  ExpectNothingLeft();
}

// The state letters of every thread of `pod`'s process in run `run_id`
// (from /proc/PID/task/TID/stat), "" when it has none.
std::string PodThreadStates(const std::string& run_id, const std::string& pod) {
  std::string states;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/proc", ec)) {
    std::string cmdline = ReadAll(e.path().string() + "/cmdline");
    std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
    if (!Contains(cmdline, "__pod ") ||
        !Contains(cmdline, "--run-id " + run_id + " --pod " + pod + " "))
      continue;
    for (const auto& t : fs::directory_iterator(e.path() / "task", ec)) {
      const std::string stat = ReadAll(t.path().string() + "/stat");
      const size_t paren = stat.rfind(')');
      if (paren != std::string::npos && paren + 2 < stat.size())
        states += stat[paren + 2];
    }
  }
  return states;
}

bool FuseMountedUnder(const std::string& dir) {
  return Contains(ReadAll("/proc/mounts"), " " + dir + "/");
}

// Issue 33: a sigstop'd and a blocked_io'd pod leave nothing stopped,
// blocked or mounted, whether the run ends normally or its supervisor is
// killed mid-fault and `trainsim cleanup` removes the rest.
TEST_F(TrainsimPrivilegedTest, HangedRunLeavesNothingBehind) {
  std::ofstream(scenario_path_) << R"({
    "name": "priv-hang", "duration_s": 14, "interval_s": 1,
    "jobs": [{"namespace": "training", "name": "r", "kind": "allreduce",
              "workers": 3, "gradient_bytes": 100000, "step_ms": 100,
              "compute_ms": 5}],
    "faults": [{"kind": "hang", "mode": "sigstop", "pod": "r-worker-0", "start_s": 4},
               {"kind": "hang", "mode": "blocked_io", "pod": "r-worker-1", "start_s": 4}]
  })";
  auto wait_for_hangs = [this](const std::string& log) {
    std::string stopped, blocked;
    // The ring connects first (a rank stopped before would hold it up and
    // the blocked one would never reach a step): faults at 4 s, seen by 15 s.
    for (int i = 0; i < 150; ++i) {
      stopped = PodThreadStates(run_id_, "r-worker-0");
      blocked = PodThreadStates(run_id_, "r-worker-1");
      if (!stopped.empty() &&
          std::all_of(stopped.begin(), stopped.end(),
                      [](char c) { return c == 'T'; }) &&
          Contains(blocked, "D"))
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "r-worker-0 threads " << stopped << ", r-worker-1 "
                  << blocked << "\n"
                  << ReadAll(log);
  };
  auto expect_no_hang_left = [this] {
    EXPECT_FALSE(FuseMountedUnder(RunDir(run_id_))) << ReadAll("/proc/mounts");
    EXPECT_EQ(PodThreadStates(run_id_, "r-worker-0"), "");
    EXPECT_EQ(PodThreadStates(run_id_, "r-worker-1"), "");
    ExpectNothingLeft();
  };

  // The normal end: the faults last until then.
  {
    Subprocess run = Subprocess::Spawn({TRAINSIM_BIN, "run", "--scenario",
                                        scenario_path_, "--run-id", run_id_},
                                       dir_ + "/run.log");
    wait_for_hangs(dir_ + "/run.log");
    EXPECT_TRUE(FuseMountedUnder(RunDir(run_id_)));
    for (int i = 0; i < 400 && run.Running(); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_FALSE(run.Running()) << "the run did not end";
    EXPECT_EQ(run.status(), 0) << ReadAll(dir_ + "/run.log");
    expect_no_hang_left();
  }
  // The supervisor killed mid-fault: `trainsim cleanup` undoes it.
  run_id_ = NewRunId();
  Subprocess run = Subprocess::Spawn(
      {TRAINSIM_BIN, "run", "--scenario", scenario_path_, "--run-id", run_id_},
      dir_ + "/run2.log");
  wait_for_hangs(dir_ + "/run2.log");
  kill(run.pid(), SIGKILL);
  run.Stop(std::chrono::milliseconds(0));  // reap
  CommandResult r = RunCommand({TRAINSIM_BIN, "cleanup", "--run-id", run_id_},
                               std::chrono::seconds(60));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  expect_no_hang_left();
}

// up detaches and keeps the node running; down removes all of it.
TEST_F(TrainsimPrivilegedTest, UpThenDown) {
  CommandResult up = RunCommand(
      {TRAINSIM_BIN, "up", "--scenario", scenario_path_, "--run-id", run_id_},
      std::chrono::seconds(60));
  ASSERT_EQ(up.exit_code, 0) << up.output;
  EXPECT_TRUE(Contains(up.output, "trainsim down --run-id " + run_id_))
      << up.output;
  EXPECT_GT(SupervisorPid(run_id_), 0);
  EXPECT_TRUE(Contains(RunCommand({"ip", "netns", "list"}).output,
                       "trainsim-" + run_id_ + "-tj-worker-2"));
  // A live run is not a leftover: plain cleanup leaves it alone.
  CommandResult c = RunCommand({TRAINSIM_BIN, "cleanup", "--run-id", run_id_});
  EXPECT_TRUE(Contains(c.output, "is alive")) << c.output;
  EXPECT_TRUE(fs::exists(RunDir(run_id_) + "/info.json"));

  CommandResult down = RunCommand({TRAINSIM_BIN, "down", "--run-id", run_id_},
                                  std::chrono::seconds(60));
  EXPECT_EQ(down.exit_code, 0) << down.output;
  ExpectNothingLeft();
}

TEST_F(TrainsimPrivilegedTest, InvalidScenarioExits2NamingTheField) {
  std::ofstream(scenario_path_)
      << R"({"name": "x", "jobs": [{"name": "j", "placement": {"strategy": "random"}}]})";
  CommandResult r = RunCommand(
      {TRAINSIM_BIN, "run", "--scenario", scenario_path_, "--run-id", run_id_});
  EXPECT_EQ(r.exit_code, 2) << r.output;
  EXPECT_TRUE(
      Contains(r.output, "jobs[0].placement.strategy: unknown strategy"))
      << r.output;
  ExpectNothingLeft();
}

// A stand-in agent: records its flags and serves a canned report, so the
// verify contract is checked without the real agent.
constexpr const char* kFakeAgent = R"(#!/usr/bin/env python3
import http.server, json, sys
args = sys.argv[1:]
import os
open(sys.argv[0] + ".args", "w").write("\n".join(args + ["env=" + os.environ.get("TRAINSCOPE_FAKE_NVML_CONFIG", "")]))
host, port = args[args.index("--listen") + 1].rsplit(":", 1)
report = open(sys.argv[0] + ".report").read()
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = report.encode() if self.path == "/api/v1/report" else b"{}"
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.HTTPServer((host, int(port)), H).serve_forever()
)";

class TrainsimVerifyTest : public TrainsimPrivilegedTest {
 protected:
  CommandResult Verify(const json& diagnoses, json expect) {
    json s = json::parse(kScenario);
    s["duration_s"] = 3;
    s["expect"] = std::move(expect);
    s["allow"] =
        json::parse(R"([{"kind": "cpu_throttled", "pod": "tj-worker-2"}])");
    // The stand-in reports no steps/s, and 3 s hold no 10 s window.
    s["skip_step_rate_check"] = "a 3 s run against a stand-in agent";
    return Run(s, diagnoses, json::array());
  }
  // verify of `scenario` against the stand-in serving these diagnoses and
  // jobs; extra: more trainsim flags.
  CommandResult Run(const json& scenario, const json& diagnoses,
                    const json& jobs, std::vector<std::string> extra = {},
                    std::chrono::seconds timeout = std::chrono::seconds(60)) {
    std::ofstream(scenario_path_) << scenario.dump();
    agent_ = dir_ + "/fake-agent.py";
    std::ofstream(agent_) << kFakeAgent;
    fs::permissions(agent_, fs::perms::owner_all);
    std::ofstream(agent_ + ".report") << json({{"generated_at", "x"},
                                               {"node", "n"},
                                               {"diagnoses", diagnoses},
                                               {"jobs", jobs}})
                                             .dump();
    std::vector<std::string> argv = {
        TRAINSIM_BIN,   "verify",   "--scenario",
        scenario_path_, "--run-id", run_id_,
        "--agent",      agent_,     "--agent-arg=--flows=off"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return RunCommand(argv, timeout);
  }
  static json LastLine(const std::string& out) {
    std::string s = out;
    while (!s.empty() && s.back() == '\n') s.pop_back();
    return json::parse(s.substr(s.rfind('\n') + 1));
  }
  std::string agent_;
};

TEST_F(TrainsimVerifyTest, PassesAndStartsTheAgentWithTheContractFlags) {
  CommandResult r = Verify(
      json::parse(R"([
      {"kind": "hot_parameter_server", "pod": "tj-ps-0", "severity": "warning"},
      {"kind": "cpu_throttled", "pod": "tj-worker-2", "severity": "critical"},
      {"kind": "memory_pressure", "pod": "tj-ps-1", "severity": "info"}])"),
      json::parse(R"([{"kind": "hot_parameter_server", "pod": "tj-ps-0"}])"));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  json last = LastLine(r.output);
  EXPECT_EQ(last["scenario"], "priv-2ps-3w");
  EXPECT_EQ(last["passed"], true);
  ASSERT_EQ(last["detected"].size(), 1u);
  EXPECT_EQ(last["detected"][0]["pod"], "tj-ps-0");
  EXPECT_GT(last["detected"][0]["after_s"].get<double>(), 0);
  EXPECT_TRUE(Contains(r.output, "expected diagnoses seen: 1/1")) << r.output;
  const std::string args = ReadAll(agent_ + ".args");
  for (const std::string& flag : std::vector<std::string>{
           "--discovery\napiserver",
           "--kube-api\nhttp://127.0.0.1:", "--node-name\ntrainsim-" + run_id_,
           "--listen\n127.0.0.1:", "--interval\n1", "--flows=off",
           "env=" + RunDir(run_id_) + "/fake-nvml.json"})
    EXPECT_TRUE(Contains(args, flag)) << flag << " not in:\n" << args;
  ExpectNothingLeft();
}

TEST_F(TrainsimVerifyTest, FailsOnMissingAndUnexpected) {
  CommandResult r = Verify(
      json::parse(R"([
      {"kind": "straggler_worker", "pod": "tj-worker-0", "severity": "warning"}])"),
      json::parse(R"([{"kind": "hot_parameter_server", "pod": "tj-ps-0"}])"));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  json last = LastLine(r.output);
  EXPECT_EQ(last["passed"], false);
  EXPECT_EQ(
      last["missing"],
      json::parse(R"([{"kind": "hot_parameter_server", "pod": "tj-ps-0"}])"));
  EXPECT_EQ(
      last["unexpected"],
      json::parse(R"([{"kind": "straggler_worker", "pod": "tj-worker-0"}])"));
  ExpectNothingLeft();
}

// The step-rate check and the results file through the real supervisor:
// the pods' stamped step counts against a stand-in reporting one worker
// right (5 steps/s at 200 ms steps) and one 40% high.
TEST_F(TrainsimVerifyTest, StepRatesAgainstTheGroundTruthAndResultsFile) {
  const json scenario = json::parse(R"({
    "name": "priv-steps", "duration_s": 22, "interval_s": 1,
    "jobs": [{"namespace": "training", "name": "sj", "ps": 1, "workers": 2,
              "step_ms": 200, "compute_ms": 5,
              "variables": [{"name": "dense", "bytes": 50000}]}]})");
  const json jobs = json::parse(R"([{"namespace": "training",
    "training_job": "sj", "steps_per_second": 12.0,
    "worker_steps_per_second": {"sj-worker-0": 5.0, "sj-worker-1": 7.0}}])");
  const json diagnoses = json::parse(R"([{"kind": "hot_parameter_server",
    "pod": "sj-ps-0", "severity": "info",
    "evidence": {"cost_fraction": 0.01, "expected_speedup": 1.01}}])");
  const std::string results = dir_ + "/results.json";
  CommandResult r = Run(scenario, diagnoses, jobs, {"--results", results},
                        std::chrono::seconds(90));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  json last = LastLine(r.output);
  EXPECT_EQ(last["passed"], false);
  EXPECT_EQ(last["unexpected"], json::array());
  const json& steps = last["step_rates"];
  EXPECT_EQ(steps["checked"], true);
  EXPECT_EQ(steps["passed"], false);
  ASSERT_EQ(steps["workers"].size(), 2u) << steps;
  EXPECT_EQ(steps["workers"][0]["pod"], "sj-worker-0");
  EXPECT_NEAR(steps["workers"][0]["true_steps_per_second"].get<double>(), 5.0,
              0.25);
  EXPECT_EQ(steps["workers"][0]["passed"], true) << steps;
  EXPECT_EQ(steps["workers"][1]["passed"], false) << steps;
  EXPECT_TRUE(Contains(r.output, "Steps per second per worker")) << r.output;
  EXPECT_TRUE(Contains(r.output, "FAIL: off by +")) << r.output;

  std::ifstream in(results);
  const json res = json::parse(in, nullptr, false);
  ASSERT_TRUE(res.is_object()) << "no results file";
  EXPECT_EQ(res["scenario"], "priv-steps");
  EXPECT_EQ(res["verify"], last);
  EXPECT_EQ(res["pods"]["sj-ps-0"]["role"], "ps");
  ASSERT_EQ(res["jobs"].size(), 1u);
  EXPECT_NEAR(res["jobs"][0]["true_steps_per_second"].get<double>(), 10.0, 0.5);
  EXPECT_EQ(res["jobs"][0]["agent_steps_per_second"], 12.0);
  ASSERT_EQ(res["diagnoses"].size(), 1u);
  EXPECT_EQ(res["diagnoses"][0]["severity"], "info");
  EXPECT_EQ(res["diagnoses"][0]["expected_speedup"], 1.01);
  ExpectNothingLeft();
}

}  // namespace
}  // namespace trainsim
