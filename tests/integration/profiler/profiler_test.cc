// Privileged: the profiler on the real kernel. A workload with named hot
// functions in known proportions runs in a kubelet-style pod cgroup; the
// agent profiles it through /api/v1/profile and `trainscope profile`.
// Every process, cgroup and agent is removed by destructors, and the last
// test checks that no profiler program or perf event is left attached.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <thread>

#include "agent_process.h"
#include "flows_lab.h"
#include "kernel_pod.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const char* kNs = "prof-test";

nlohmann::json PsPod(const KernelPod& pod, const std::string& name) {
  nlohmann::json j = KernelPodJson(pod, kNs, name, "198.18.7.10");
  j["metadata"]["labels"] = {{"training.kubeflow.org/job-name", "pt"},
                             {"training.kubeflow.org/replica-type", "ps"},
                             {"training.kubeflow.org/replica-index", "0"}};
  return j;
}

void WritePods(const fs::path& path, const std::vector<nlohmann::json>& items) {
  nlohmann::json list = {{"apiVersion", "v1"},
                         {"kind", "PodList"},
                         {"metadata", {{"resourceVersion", "1"}}},
                         {"items", items}};
  std::ofstream(path.string() + ".tmp") << list.dump();
  fs::rename(path.string() + ".tmp", path);
}

struct Answer {
  int status = 0;
  std::string body;
};

Answer Get(int port, const std::string& path_and_query) {
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(2, 0);
  client.set_read_timeout(120, 0);
  auto res = client.Get(path_and_query);
  if (!res) return {};
  return {res->status, res->body};
}

std::string ProfilePath(const std::string& pod, const std::string& extra) {
  return "/api/v1/profile?namespace=" + std::string(kNs) + "&pod=" + pod +
         extra;
}

// Folded text -> (stack, value).
std::vector<std::pair<std::string, int64_t>> ParseFolded(
    const std::string& text) {
  std::vector<std::pair<std::string, int64_t>> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t space = line.rfind(' ');
    if (space == std::string::npos) continue;
    out.emplace_back(line.substr(0, space), std::stoll(line.substr(space + 1)));
  }
  return out;
}

bool HasFrame(const std::string& stack, const std::string& frame) {
  return (";" + stack + ";").find(";" + frame + ";") != std::string::npos;
}

// Sum of values whose stack holds `frame` (and every `also` fragment).
int64_t Inclusive(const std::vector<std::pair<std::string, int64_t>>& folded,
                  const std::string& frame,
                  const std::vector<std::string>& also = {}) {
  int64_t sum = 0;
  for (const auto& [stack, value] : folded) {
    bool match = frame.empty() || HasFrame(stack, frame);
    for (const auto& a : also) {
      match = match && stack.find(a) != std::string::npos;
    }
    if (match) sum += value;
  }
  return sum;
}

std::string Shell(const std::string& command) {
  std::string out;
  if (FILE* p = ::popen((command + " 2>&1").c_str(), "r")) {
    char buf[4096];
    size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    ::pclose(p);
  }
  return out;
}

// Ids of the profiler's BPF programs loaded on the whole machine.
std::set<int> ProfilerProgramIds() {
  // The kernel keeps 15 characters of a name: on_sched_switc(h).
  auto ids = BpfObjectIds("bpftool -j prog show", [](const std::string& name) {
    return name == "on_cpu_sample" || name.rfind("on_sched_switc", 0) == 0;
  });
  if (!ids) ADD_FAILURE() << "bpftool -j prog show did not answer JSON";
  return ids.value_or(std::set<int>{});
}

class ProfilerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    if (KernelPod::Unified().empty()) GTEST_SKIP() << "no cgroup v2 here";
    dir_ = fs::temp_directory_path() /
           ("trainscope-profiler-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    pod_ = std::make_unique<KernelPod>();
    other_ = std::make_unique<KernelPod>();
    WritePods(dir_ / "pods.json",
              {PsPod(*pod_, "pt-ps-0"), PsPod(*other_, "pt-ps-1")});
    // On-demand profiles only: the continuous one has its own test.
    StartAgent({"--profile-continuous", "off"});
  }
  void StartAgent(std::vector<std::string> extra) {
    agent_.reset();
    port_ = FreePort();
    std::vector<std::string> args = {"--listen",
                                     "127.0.0.1:" + std::to_string(port_),
                                     "--interval",
                                     "0.5",
                                     "--node-name",
                                     "node-a",
                                     "--discovery",
                                     "file",
                                     "--pod-file",
                                     (dir_ / "pods.json").string(),
                                     "--flows",
                                     "off",
                                     "--profile-max-concurrent",
                                     "1",
                                     "--profile-max-seconds",
                                     "20"};
    args.insert(args.end(), extra.begin(), extra.end());
    agent_ = std::make_unique<AgentProcess>(args);
    ASSERT_TRUE(agent_->WaitHttpOk(port_, "/readyz", 10s)) << agent_->Stderr();
  }
  void TearDown() override {
    workloads_.clear();
    agent_.reset();
    pod_.reset();
    other_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // Starts the workload (in `pod`) and waits until it runs.
  ChildProcess& StartWorkload(const std::string& binary, const char* mode,
                              int seconds, KernelPod& pod) {
    const std::string log =
        (dir_ / ("workload-" + std::to_string(workloads_.size()))).string();
    workloads_.push_back(std::make_unique<ChildProcess>(
        std::vector<std::string>{binary, mode, std::to_string(seconds)}, log));
    pod.MoveIn(workloads_.back()->pid());
    for (int i = 0; i < 100 && Slurp(log).find("ready") == std::string::npos;
         ++i) {
      std::this_thread::sleep_for(20ms);
    }
    return *workloads_.back();
  }

  fs::path dir_;
  std::unique_ptr<KernelPod> pod_, other_;
  int port_ = 0;
  std::unique_ptr<AgentProcess> agent_;
  std::vector<std::unique_ptr<ChildProcess>> workloads_;
};

// 60/30/10 of the CPU time in hot_alpha/hot_beta/hot_gamma (CPU time, so
// preemption by other load does not change the truth).
void ExpectHotProportions(
    const std::vector<std::pair<std::string, int64_t>>& folded) {
  const double total = double(Inclusive(folded, ""));
  ASSERT_GT(total, 100) << "too few samples to judge";
  const double a = Inclusive(folded, "hot_alpha") / total;
  const double b = Inclusive(folded, "hot_beta") / total;
  const double g = Inclusive(folded, "hot_gamma") / total;
  EXPECT_GE(a + b + g, 0.80);
  const double hot = a + b + g;
  EXPECT_NEAR(a / hot, 0.60, 0.10);
  EXPECT_NEAR(b / hot, 0.30, 0.10);
  EXPECT_NEAR(g / hot, 0.10, 0.10);
  std::printf("[profiler] samples %.0f: alpha %.3f beta %.3f gamma %.3f\n",
              total, a / hot, b / hot, g / hot);
}

TEST_F(ProfilerTest, CpuProfileFindsHotFunctionsInKnownProportions) {
  // Long enough to outlive `go tool pprof`, which may first build itself
  // (over a minute on a loaded CI machine).
  StartWorkload(PROFILER_WORKLOAD_BIN, "cpu", 300, *pod_);
  // Folded over HTTP.
  Answer folded =
      Get(port_, ProfilePath("pt-ps-0", "&seconds=8&format=folded"));
  ASSERT_EQ(folded.status, 200) << folded.body;
  auto stacks = ParseFolded(folded.body);
  ExpectHotProportions(stacks);
  EXPECT_GT(Inclusive(stacks, "[thread ts-hot]"), 0);

  // SVG through the CLI: a flame graph whose total and shares agree.
  const std::string cli =
      std::string(TRAINSCOPE_CLI_BIN) +
      " profile --agent http://127.0.0.1:" + std::to_string(port_) + " --pod " +
      kNs + "/pt-ps-0 --seconds 4 --output ";
  const std::string svg_path = (dir_ / "cpu.svg").string();
  std::string out = Shell(cli + svg_path + " --format svg");
  const std::string svg = Slurp(svg_path);
  ASSERT_NE(svg.find("<svg"), std::string::npos) << out;
  std::smatch total, alpha;
  ASSERT_TRUE(
      std::regex_search(svg, total, std::regex("data-total=\"(\\d+)\"")));
  ASSERT_TRUE(std::regex_search(
      svg, std::regex("<title>all \\(" + total[1].str() + " samples")));
  ASSERT_TRUE(std::regex_search(
      svg, alpha,
      std::regex("<title>hot_alpha \\((\\d+) samples, ([0-9.]+)%\\)")));
  EXPECT_NEAR(std::stod(alpha[2]), 60 * 0.95, 12) << alpha[0];

  // pprof through the CLI, read by go tool pprof.
  const std::string pprof = (dir_ / "cpu.pb.gz").string();
  out = Shell(cli + pprof);
  ASSERT_TRUE(fs::exists(pprof)) << out;
  if (Shell("command -v go").empty()) {
    ADD_FAILURE() << "go (Debian golang-go) is needed to check the pprof file";
  } else {
    const std::string top =
        // The tool cache keeps go's own build of pprof between runs (it
        // takes a minute to build on 2 cores).
        Shell("HOME=" + dir_.string() +
              " GOCACHE=${TRAINSCOPE_CACHE_DIR:-/var/cache/trainscope}/go-build"
              " go tool pprof -top -sample_index=samples " +
              pprof);
    EXPECT_NE(top.find("hot_alpha"), std::string::npos) << top;
    EXPECT_NE(top.find("Type: samples"), std::string::npos) << top;
    std::smatch m;
    ASSERT_TRUE(std::regex_search(top, m, std::regex("Total samples = (\\d+)")))
        << top;
    EXPECT_GT(std::stoi(m[1]), 100) << top;
  }
}

TEST_F(ProfilerTest, FoldedAndSvgOfOneProfileCarryTheSameTotal) {
  StartWorkload(PROFILER_WORKLOAD_BIN, "cpu", 60, *pod_);
  Answer folded =
      Get(port_, ProfilePath("pt-ps-0", "&seconds=3&format=folded"));
  ASSERT_EQ(folded.status, 200) << folded.body;
  // The agent draws its SVG from the same folded text; here the CLI's
  // folded output is redrawn by nobody else, so compare the agent's SVG of
  // a second profile with its own folded sum through the title of "all".
  Answer svg = Get(port_, ProfilePath("pt-ps-0", "&seconds=3&format=svg"));
  ASSERT_EQ(svg.status, 200);
  std::smatch total;
  ASSERT_TRUE(
      std::regex_search(svg.body, total, std::regex("data-total=\"(\\d+)\"")));
  int64_t thread_sum = 0;
  std::regex thread_title("<title>\\[thread [^<]*\\] \\((\\d+) samples");
  for (std::sregex_iterator it(svg.body.begin(), svg.body.end(), thread_title),
       end;
       it != end; ++it) {
    thread_sum += std::stoll((*it)[1]);
  }
  EXPECT_EQ(thread_sum, std::stoll(total[1]));
  EXPECT_GT(Inclusive(ParseFolded(folded.body), ""), 0);
}

TEST_F(ProfilerTest, OffCpuProfileSplitsSleepRecvAndSpin) {
  const std::string stats = (dir_ / "phases").string();
  ::setenv("PROFILER_WORKLOAD_STATS", stats.c_str(), 1);
  StartWorkload(PROFILER_WORKLOAD_BIN, "offcpu", 60, *pod_);
  ::unsetenv("PROFILER_WORKLOAD_STATS");
  std::this_thread::sleep_for(300ms);
  auto phases = [&] {
    std::istringstream in(Slurp(stats));
    double s = 0, r = 0, c = 0, total = 0;
    in >> s >> r >> c >> total;
    return std::array<double, 4>{s, r, c, total};
  };
  const auto before = phases();
  Answer a = Get(
      port_, ProfilePath("pt-ps-0", "&seconds=6&type=offcpu&format=folded"));
  const auto after = phases();
  ASSERT_EQ(a.status, 200) << a.body;
  const double truth_sleep = after[0] - before[0];
  const double truth_recv = after[1] - before[1];
  // Everything but sleeping and receiving: the spin phase, send() and the
  // workload's bookkeeping (writing this file can block briefly).
  const double wall = after[3] - before[3];
  const double truth_spin = wall - truth_sleep - truth_recv;
  ASSERT_GT(wall, 4e9);
  auto stacks = ParseFolded(a.body);
  const std::string waiter = "[thread ts-waiter]";
  const double sleep =
      Inclusive(stacks, "sleep_phase()", {waiter, "[blocked]"}) / wall;
  const double recv =
      Inclusive(stacks, "recv_phase(int)", {waiter, "[blocked]"}) / wall;
  // The rest of the time: on CPU, or runnable when preempted.
  const double spin = 1 - sleep - recv;
  std::printf(
      "[profiler] off-CPU sleep %.3f (truth %.3f) recv %.3f (%.3f) spin %.3f "
      "(%.3f)\n",
      sleep, truth_sleep / wall, recv, truth_recv / wall, spin,
      truth_spin / wall);
  EXPECT_NEAR(sleep, truth_sleep / wall, 0.10);
  EXPECT_NEAR(recv, truth_recv / wall, 0.10);
  EXPECT_NEAR(spin, truth_spin / wall, 0.10);
  // And near the workload's nominal 50/33/17 split.
  EXPECT_NEAR(sleep, 0.50, 0.15);
  EXPECT_NEAR(recv, 0.33, 0.15);
  EXPECT_GT(Inclusive(stacks, "", {"[thread ts-helper]"}), 0);
}

TEST_F(ProfilerTest, StrippedBinaryKeepsModuleAndOffset) {
  StartWorkload(PROFILER_WORKLOAD_STRIPPED_BIN, "cpu", 60, *pod_);
  Answer a = Get(port_, ProfilePath("pt-ps-0", "&seconds=3&format=folded"));
  ASSERT_EQ(a.status, 200) << a.body;
  auto stacks = ParseFolded(a.body);
  const double total = double(Inclusive(stacks, ""));
  ASSERT_GT(total, 50);
  EXPECT_EQ(a.body.find("hot_alpha"), std::string::npos);
  int64_t offsets = 0;
  std::regex frame("profiler_workload_stripped\\+0x[0-9a-f]+");
  for (const auto& [stack, value] : stacks) {
    if (std::regex_search(stack, frame)) offsets += value;
  }
  EXPECT_GE(offsets / total, 0.80) << a.body.substr(0, 2000);
}

TEST_F(ProfilerTest, PodExitingMidProfileGivesAPartialProfile) {
  StartWorkload(PROFILER_WORKLOAD_BIN, "cpu", 2, *pod_);
  Answer a = Get(port_, ProfilePath("pt-ps-0", "&seconds=4&format=folded"));
  ASSERT_EQ(a.status, 200) << a.body;
  auto stacks = ParseFolded(a.body);
  EXPECT_GT(Inclusive(stacks, "hot_alpha"), 20) << a.body;
}

TEST_F(ProfilerTest, BadRequestsBusyPodsAndAResponsiveServer) {
  StartWorkload(PROFILER_WORKLOAD_BIN, "cpu", 60, *pod_);
  EXPECT_EQ(Get(port_, ProfilePath("nope", "&seconds=1")).status, 404);
  EXPECT_EQ(Get(port_, ProfilePath("pt-ps-0", "&seconds=abc")).status, 400);
  EXPECT_EQ(Get(port_, ProfilePath("pt-ps-0", "&seconds=21")).status, 400);
  EXPECT_EQ(Get(port_, ProfilePath("pt-ps-0", "&type=wall")).status, 400);
  EXPECT_EQ(Get(port_, std::string("/api/v1/profile?namespace=") + kNs).status,
            400);
  // Without namespace= the pod is named by UID (--discovery cgroup's pods):
  // a name from a namespace is not found, and the answer says why.
  Answer unnamespaced = Get(port_, "/api/v1/profile?pod=pt-ps-0");
  EXPECT_EQ(unnamespaced.status, 404);
  EXPECT_NE(unnamespaced.body.find("--discovery cgroup"), std::string::npos)
      << unnamespaced.body;

  auto running = std::async(std::launch::async, [&] {
    return Get(port_, ProfilePath("pt-ps-0", "&seconds=4&format=folded"));
  });
  std::this_thread::sleep_for(500ms);
  // The same pod: 409; another pod beyond --profile-max-concurrent 1: 429.
  Answer same = Get(port_, ProfilePath("pt-ps-0", "&seconds=1"));
  EXPECT_EQ(same.status, 409) << same.body;
  Answer other = Get(port_, ProfilePath("pt-ps-1", "&seconds=1"));
  EXPECT_EQ(other.status, 429) << other.body;
  // Scrapes and probes are answered while the profile runs.
  for (const char* path : {"/healthz", "/metrics", "/readyz"}) {
    const auto t0 = std::chrono::steady_clock::now();
    Answer r = Get(port_, path);
    const auto took = std::chrono::steady_clock::now() - t0;
    EXPECT_EQ(r.status, 200) << path;
    EXPECT_LT(took, 1s) << path;
  }
  Answer done = running.get();
  EXPECT_EQ(done.status, 200) << done.body;
  EXPECT_GT(Inclusive(ParseFolded(done.body), "hot_alpha"), 0);
}

TEST_F(ProfilerTest, NothingStaysAttachedAfterProfiles) {
  const std::set<int> before = ProfilerProgramIds();
  StartWorkload(PROFILER_WORKLOAD_BIN, "offcpu", 60, *pod_);
  ASSERT_EQ(Get(port_, ProfilePath("pt-ps-0", "&seconds=1")).status, 200);
  ASSERT_EQ(Get(port_, ProfilePath("pt-ps-0", "&seconds=1&type=offcpu")).status,
            200);
  // The agent still runs; its profiles' programs, links and perf events
  // must be gone. Programs of the same name that were loaded before the
  // profiles belong to other agents on the machine (a soak, a second test
  // run) and are left out by id. The kernel frees a detached tracing
  // program after an RCU grace period, so allow it a few seconds.
  const std::string pid = std::to_string(agent_->pid());
  std::set<int> left;
  std::string perf;
  for (int i = 0; i < 50; ++i) {
    left.clear();
    for (int id : ProfilerProgramIds()) {
      if (!before.count(id)) left.insert(id);
    }
    perf = Shell("bpftool perf show");
    if (left.empty() && perf.find("pid " + pid + " ") == std::string::npos) {
      break;
    }
    std::this_thread::sleep_for(200ms);
  }
  EXPECT_TRUE(left.empty()) << Shell("bpftool prog show");
  EXPECT_EQ(perf.find("pid " + pid + " "), std::string::npos) << perf;
  const std::string metrics = Get(port_, "/metrics").body;
  EXPECT_NE(metrics.find("trainscope_collector_up{collector=\"profiler\"} 1"),
            std::string::npos);
}

// The continuous 19 Hz profile keeps each training pod's top functions:
// the workload's spin loop leads, the endpoint checks its input, and
// turning it off says so.
TEST_F(ProfilerTest, ContinuousProfileKeepsTopFunctions) {
  StartAgent({"--profile-continuous-hz", "49"});
  StartWorkload(PROFILER_WORKLOAD_BIN, "cpu", 60, *pod_);
  const std::string top =
      "/api/v1/profile/top?namespace=" + std::string(kNs) + "&pod=pt-ps-0";
  nlohmann::json body;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(250ms);
    Answer a = Get(port_, top);
    ASSERT_EQ(a.status, 200) << a.body;
    body = nlohmann::json::parse(a.body);
    if (body["samples"].get<int64_t>() >= 100) break;
  }
  ASSERT_GE(body["samples"].get<int64_t>(), 100) << body.dump();
  ASSERT_FALSE(body["functions"].empty());
  // The leaf of the hot loop: Spin, called by the three hot functions.
  EXPECT_NE(body["functions"][0]["function"].get<std::string>().find("Spin"),
            std::string::npos)
      << body.dump();
  EXPECT_GE(body["functions"][0]["share"].get<double>(), 0.5);
  EXPECT_EQ(body["hz"], 49);
  // The other pod runs nothing.
  Answer idle = Get(port_, "/api/v1/profile/top?namespace=" + std::string(kNs) +
                               "&pod=pt-ps-1");
  EXPECT_EQ(idle.status, 200);
  EXPECT_EQ(nlohmann::json::parse(idle.body)["samples"], 0);
  EXPECT_EQ(Get(port_, top + "&n=0").status, 400);
  EXPECT_EQ(Get(port_, "/api/v1/profile/top?namespace=x&pod=y").status, 404);
  // An on-demand profile runs beside it and sees the same pod.
  Answer folded =
      Get(port_, ProfilePath("pt-ps-0", "&seconds=2&format=folded"));
  EXPECT_EQ(folded.status, 200);
  EXPECT_GT(Inclusive(ParseFolded(folded.body), "hot_alpha"), 0);

  StartAgent({"--profile-continuous", "off"});
  EXPECT_EQ(Get(port_, top).status, 503);
}

// With --profile-continuous-offcpu on, the same window holds where each
// pod's threads wait: the workload's sleep and recv phases, blocked, in the
// ratio of their lengths (30 ms : 20 ms).
TEST_F(ProfilerTest, ContinuousOffCpuKeepsWaitSites) {
  StartAgent({"--profile-continuous-offcpu", "on"});
  StartWorkload(PROFILER_WORKLOAD_BIN, "offcpu", 60, *pod_);
  const std::string top = "/api/v1/profile/top?namespace=" + std::string(kNs) +
                          "&pod=pt-ps-0&type=offcpu&n=20";
  nlohmann::json body;
  for (int i = 0; i < 40; ++i) {
    std::this_thread::sleep_for(250ms);
    Answer a = Get(port_, top);
    ASSERT_EQ(a.status, 200) << a.body;
    body = nlohmann::json::parse(a.body);
    if (body["samples"].get<int64_t>() >= 4'000'000'000) break;  // 4 s
  }
  EXPECT_EQ(body["unit"], "nanoseconds");
  int64_t sleep = 0, recv = 0;
  for (const auto& f : body["functions"]) {
    if (f["function"] == "blocked sleep_phase()") sleep = f["samples"];
    if (f["function"] == "blocked recv_phase(int)") recv = f["samples"];
  }
  ASSERT_GT(sleep, 0) << body.dump(1);
  ASSERT_GT(recv, 0) << body.dump(1);
  EXPECT_NEAR(double(sleep) / double(recv), 1.5, 0.5) << body.dump(1);
  EXPECT_EQ(Get(port_, "/api/v1/profile/top?namespace=" + std::string(kNs) +
                           "&pod=pt-ps-0&type=wall")
                .status,
            400);
  // Without the flag the off-CPU window does not exist.
  StartAgent({});
  EXPECT_EQ(Get(port_, top).status, 503);
}

// Without CAP_BPF, CAP_PERFMON and CAP_SYS_ADMIN the profiler reports down
// with the reason; the agent and its other collectors work on.
TEST(ProfilerDegradationTest, WithoutCapabilitiesItSaysWhyAndTheRestWorks) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  const fs::path dir =
      fs::temp_directory_path() /
      ("trainscope-profiler-nocap-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  KernelPod pod;
  WritePods(dir / "pods.json", {PsPod(pod, "pt-ps-0")});
  const int port = FreePort();
  const std::string cmd =
      std::string("exec ") + TRAINSCOPE_AGENT_BIN +
      " --listen 127.0.0.1:" + std::to_string(port) +
      " --interval 0.5 --node-name node-a --discovery file --pod-file " +
      (dir / "pods.json").string() + " --flows off";
  {
    ChildProcess agent(
        {"capsh", "--drop=cap_sys_admin,cap_bpf,cap_perfmon", "--", "-c", cmd},
        (dir / "agent.log").string());
    std::string m;
    for (int i = 0; i < 40; ++i) {
      std::this_thread::sleep_for(250ms);
      m = Get(port, "/metrics").body;
      if (m.find("collector=\"profiler\"") != std::string::npos) break;
    }
    EXPECT_NE(m.find("trainscope_collector_up{collector=\"profiler\"} 0"),
              std::string::npos)
        << m;
    EXPECT_NE(m.find("trainscope_collector_up{collector=\"cgroup\"} 1"),
              std::string::npos);
    Answer a = Get(port,
                   "/api/v1/profile?namespace=prof-test&pod=pt-ps-0"
                   "&seconds=1");
    EXPECT_EQ(a.status, 503);
    EXPECT_NE(a.body.find("profiling unavailable"), std::string::npos)
        << a.body;
    EXPECT_NE(a.body.find("CAP_PERFMON"), std::string::npos) << a.body;
    const std::string log = Slurp((dir / "agent.log").string());
    EXPECT_NE(log.find("[profiler] profiling unavailable"), std::string::npos)
        << log;
    EXPECT_EQ(Get(port, "/healthz").status, 200);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainscope::testing
