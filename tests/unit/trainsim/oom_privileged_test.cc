// The oom fault on a real node: the pod's training thread allocates past its
// memory limit, the kernel's cgroup OOM killer ends it, and trainsim records
// what the kubelet would (OOMKilled, 137) before restarting it. Root only;
// the run is cleaned up by id in TearDown, so a failure leaves nothing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cgroups.h"
#include "cleanup.h"
#include "fault_gate.h"
#include "faults.h"
#include "node.h"
#include "scenario_run_fixture.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;

constexpr const char* kScenario = R"({"name": "oom", "duration_s": 30,
  "jobs": [{"name": "om", "ps": 1, "workers": 1, "step_ms": 50, "compute_ms": 5,
    "variables": [{"name": "w", "bytes": 50000}],
    "resources": {"worker": {"memory_limit_bytes": 67108864}}}],
  "faults": [{"kind": "oom", "pod": "om-worker-0", "start_s": 0}]})";

class OomPrivilegedTest : public ScenarioRunTest {
 protected:
  OomPrivilegedTest() : ScenarioRunTest(kScenario, "trainsim-oom-") {}
};

// Reaps and restarts until `pod` has restarted `n` times or `limit` passed.
bool WaitForRestarts(SimNode& node, const std::string& pod, int n,
                     std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    node.TickRestarts();
    if (node.overrides(pod).restarts.count >= n) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

TEST_F(OomPrivilegedTest, TheKernelKillsThePodWhichRestartsOnce) {
  SimNode node(LoadScenarioFile(scenario_path_), scenario_path_, run_id_);
  node.set_exe(TRAINSIM_BIN);
  node.Up();
  const SimPod& pod = *node.layout().Find("om-worker-0");
  bool memory_controller = false;
  for (const Hierarchy& h : node.cgroups().hierarchies())
    memory_controller |= h.controllers.count("memory") > 0;
  if (!memory_controller) GTEST_SKIP() << "no memory cgroup controller";
  const uint64_t kills_before = node.cgroups().OomKills(pod);
  FaultScheduler faults(node);
  faults.Tick(0);
  ASSERT_TRUE(WaitForRestarts(node, pod.name, 1, std::chrono::seconds(15)));
  const ContainerRestarts& r = node.overrides(pod.name).restarts;
  EXPECT_EQ(r.last_reason, "OOMKilled");
  EXPECT_EQ(r.last_exit_code, 137);
  // The kill is the kernel's: the pod's cgroup counted it.
  EXPECT_GT(node.cgroups().OomKills(pod), kills_before);
  // The order went with the killed process: the new one trains on.
  EXPECT_FALSE(fs::exists(FaultFilePath(run_id_, pod.name)));
  EXPECT_FALSE(WaitForRestarts(node, pod.name, 2, std::chrono::seconds(3)));
  EXPECT_GT(node.PodPid(pod.name), 0);
  node.Teardown();
}

}  // namespace
}  // namespace trainsim
