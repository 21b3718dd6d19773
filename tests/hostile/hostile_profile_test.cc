// The hostile-input suite (issue 35), privileged part: profiles on the real
// kernel. A client that goes away mid-profile must not keep the profile's
// BPF program attached, its slot taken and the pod's next profile refused;
// a pod found by --discovery cgroup (no namespace, its UID for a name) can
// be profiled; a profile survives SIGHUP and ends early on SIGQUIT. Every
// process, cgroup and agent is removed by destructors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "agent_process.h"
#include "flows_lab.h"
#include "hostile_support.h"
#include "kernel_pod.h"
#include "raw_http_client.h"
#include "test_wait.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

constexpr const char* kNs = "hostile";

// Ids of the profiler's CPU programs loaded on the machine now.
size_t ProfilerPrograms() {
  auto ids = BpfObjectIds("bpftool -j prog show", [](const std::string& name) {
    return name == "on_cpu_sample";
  });
  return ids ? ids->size() : 0;
}

class HostileProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    if (KernelPod::Unified().empty()) GTEST_SKIP() << "no cgroup v2 here";
    dir_ = fs::temp_directory_path() /
           ("trainscope-hostile-profile-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    pod_ = std::make_unique<KernelPod>();
    pod_->StartBusyLoop();
  }
  void TearDown() override {
    agent_.reset();
    pod_.reset();
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  void StartAgent(std::vector<std::string> discovery) {
    port_ = FreePort();
    std::vector<std::string> args = {"--listen",
                                     "127.0.0.1:" + std::to_string(port_),
                                     "--interval",
                                     "0.5",
                                     "--node-name",
                                     "node-a",
                                     "--flows",
                                     "off",
                                     "--profile-continuous",
                                     "off",
                                     "--profile-max-concurrent",
                                     "1",
                                     "--profile-max-seconds",
                                     "30"};
    args.insert(args.end(), discovery.begin(), discovery.end());
    agent_ = std::make_unique<AgentProcess>(args);
    ASSERT_TRUE(agent_->WaitHttpOk(port_, "/readyz", 10s)) << agent_->Stderr();
  }
  void StartWithPodFile() {
    nlohmann::json pod = KernelPodJson(*pod_, kNs, "victim", "198.18.9.10");
    nlohmann::json list = {{"apiVersion", "v1"},
                           {"kind", "PodList"},
                           {"metadata", {{"resourceVersion", "1"}}},
                           {"items", {pod}}};
    std::ofstream(dir_ / "pods.json") << list.dump();
    StartAgent(
        {"--discovery", "file", "--pod-file", (dir_ / "pods.json").string()});
  }
  std::string ProfileRequest(const std::string& query) {
    return "GET /api/v1/profile?" + query +
           " HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";
  }

  fs::path dir_;
  std::unique_ptr<KernelPod> pod_;
  int port_ = 0;
  std::unique_ptr<AgentProcess> agent_;
};

// A client asks for 25 s and hangs up after 1 s: within a few seconds the
// program is detached, the slot free, the pod's next profile runs (not 409),
// and the abandoned request is counted.
TEST_F(HostileProfileTest, AnAbandonedProfileStopsAndFreesItsSlot) {
  StartWithPodFile();
  const size_t programs_before = ProfilerPrograms();
  {
    UniqueFd fd = ConnectLoopback(port_);
    ASSERT_TRUE(SendAll(
        fd.get(), ProfileRequest(std::string("namespace=") + kNs +
                                 "&pod=victim&seconds=25&format=folded")));
    ASSERT_TRUE(
        WaitUntil([&] { return ProfilerPrograms() > programs_before; }, 5s))
        << "the profile did not start";
  }  // the client closes its connection here
  const auto gone = std::chrono::steady_clock::now();
  EXPECT_TRUE(
      WaitUntil([&] { return ProfilerPrograms() == programs_before; }, 5s))
      << "the abandoned profile's program is still attached";
  const double freed_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - gone)
          .count();
  std::printf(
      "[hostile] abandoned profile detached %.2f s after the client "
      "left\n",
      freed_s);
  const std::string next =
      RawExchange(port_,
                  ProfileRequest(std::string("namespace=") + kNs +
                                 "&pod=victim&seconds=1&format=folded"),
                  10s);
  EXPECT_EQ(StatusOf(next), 200) << next.substr(0, 300);
  const auto metrics = HttpGet(port_, "/metrics");
  ASSERT_TRUE(metrics.has_value());
  EXPECT_THAT(*metrics,
              HasSubstr("trainscope_http_abandoned_requests_total 1"));
  EXPECT_THAT(agent_->Stderr(), HasSubstr("its client went away"));
  EXPECT_TRUE(ScrapeAnswers(port_, "abandoned_profile").ok);
}

// --discovery cgroup knows the pod by its UID alone: /api/v1/profile?pod=UID
// profiles it (it was refused: "namespace and pod are required").
TEST_F(HostileProfileTest, APodFoundByTheCgroupScanCanBeProfiled) {
  StartAgent({"--discovery", "cgroup", "--cgroup-root", "/sys/fs/cgroup"});
  ASSERT_TRUE(WaitUntil(
      [&] {
        auto pods = HttpGet(port_, "/api/v1/pods");
        return pods && pods->find(pod_->uid()) != std::string::npos;
      },
      10s))
      << "the cgroup scan did not find the pod";
  const std::string answer = RawExchange(
      port_, ProfileRequest("pod=" + pod_->uid() + "&seconds=2&format=folded"),
      15s);
  ASSERT_EQ(StatusOf(answer), 200) << answer.substr(0, 300);
  EXPECT_THAT(answer, HasSubstr("[thread")) << "a profile with samples";
  // The CLI names it the same way: --pod UID, no namespace.
  const fs::path out = dir_ / "cgroup-pod.folded";
  const std::string command =
      std::string(TRAINSCOPE_CLI_BIN) +
      " profile --agent http://127.0.0.1:" + std::to_string(port_) + " --pod " +
      pod_->uid() + " --seconds 1 --format folded --output " + out.string() +
      " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream folded(out);
  std::string first_line;
  EXPECT_TRUE(std::getline(folded, first_line)) << "an empty profile";
  EXPECT_TRUE(ScrapeAnswers(port_, "cgroup_pod_profile").ok);
}

// SIGHUP mid-profile: the profile completes and the agent serves on.
// SIGQUIT mid-profile: the profile ends early with what it has and the
// agent exits 0.
TEST_F(HostileProfileTest, SignalsDuringAProfile) {
  StartWithPodFile();
  const std::string query =
      std::string("namespace=") + kNs + "&pod=victim&seconds=3&format=folded";
  UniqueFd fd = ConnectLoopback(port_);
  ASSERT_TRUE(SendAll(fd.get(), ProfileRequest(query)));
  std::this_thread::sleep_for(500ms);
  ::kill(agent_->pid(), SIGHUP);
  const std::string answer = ReadUntilClose(fd.get(), 15s);
  EXPECT_EQ(StatusOf(answer), 200) << answer.substr(0, 300);
  EXPECT_TRUE(ScrapeAnswers(port_, "sighup_during_profile").ok);

  UniqueFd second = ConnectLoopback(port_);
  ASSERT_TRUE(SendAll(second.get(), ProfileRequest(query)));
  std::this_thread::sleep_for(500ms);
  ::kill(agent_->pid(), SIGQUIT);
  const std::string early = ReadUntilClose(second.get(), 15s);
  EXPECT_EQ(StatusOf(early), 200) << early.substr(0, 300);
  const auto code = agent_->WaitExit(10s);
  ASSERT_TRUE(code.has_value()) << "SIGQUIT did not stop the agent";
  EXPECT_EQ(*code, 0) << agent_->Stderr();
}

}  // namespace
}  // namespace trainscope::testing
