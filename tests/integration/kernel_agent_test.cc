// Privileged: the real agent against real kubelet-style cgroups on this
// kernel. CPU seconds and working set must match the kernel's own numbers
// within 5%, and a pod removed from discovery loses its series.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>

#include "agent_process.h"
#include "kernel_pod.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The agent is built like the tests: in an ASan or TSan build glibc's
// malloc is replaced, and its arenas hold next to nothing.
#ifdef TRAINSCOPE_TEST_SANITIZER_ALLOCATOR
constexpr bool kSanitizerAllocator = true;
#else
constexpr bool kSanitizerAllocator = false;
#endif

nlohmann::json PodJson(const KernelPod& pod, const std::string& name) {
  return {{"metadata",
           {{"name", name},
            {"namespace", "trainscope-test"},
            {"uid", pod.uid()},
            {"labels",
             {{"training.kubeflow.org/job-name", "kt"},
              {"training.kubeflow.org/replica-type", "worker"},
              {"training.kubeflow.org/replica-index", "0"}}}}},
          {"spec",
           {{"nodeName", "node-a"},
            {"containers", {{{"name", "main"}, {"image", "busybox"}}}}}},
          {"status",
           {{"phase", "Running"},
            {"podIP", "198.18.0.10"},
            {"containerStatuses",
             {{{"name", "main"},
               {"containerID", "containerd://" + pod.container_id()}}}}}}};
}

void WritePodList(const fs::path& path,
                  const std::vector<nlohmann::json>& items) {
  nlohmann::json list = {{"apiVersion", "v1"},
                         {"kind", "PodList"},
                         {"metadata", {{"resourceVersion", "1"}}},
                         {"items", items}};
  // Rename into place so the agent never reads a half-written file.
  fs::path tmp = path.string() + ".tmp";
  std::ofstream(tmp) << list.dump(2);
  fs::rename(tmp, path);
}

// The value of `metric{...pod="<pod>"...}` in an exposition, if present.
std::optional<double> Value(const std::string& text, const std::string& metric,
                            const std::string& pod) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(metric + "{", 0) != 0) continue;
    if (line.find("pod=\"" + pod + "\"") == std::string::npos) continue;
    return std::stod(line.substr(line.rfind(' ') + 1));
  }
  return std::nullopt;
}

std::optional<double> Unlabelled(const std::string& text,
                                 const std::string& metric) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(metric + " ", 0) == 0) {
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  return std::nullopt;
}

class KernelAgentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root";
    dir_ = fs::temp_directory_path() /
           ("trainscope-kernel-test-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(KernelAgentTest, CpuAndMemoryMatchTheKernelAndDeletedPodsVanish) {
  KernelPod busy, holder;
  busy.SetCpuLimit(0.5);
  holder.SetMemoryLimit(256ull << 20);
  const uint64_t held = 64ull << 20;
  pid_t busy_pid = busy.StartBusyLoop();
  holder.StartMemoryHolder(held);

  const fs::path pods = dir_ / "pods.json";
  WritePodList(pods,
               {PodJson(busy, "kt-worker-0"), PodJson(holder, "kt-ps-0")});
  const int port = FreePort();
  AgentProcess agent({"--listen", "127.0.0.1:" + std::to_string(port),
                      "--interval", "0.5", "--node-name", "node-a",
                      "--discovery", "file", "--pod-file", pods.string()});
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();

  // Let the busy pod run into its limit, then freeze it so its counter stops
  // and the agent's next sample and the kernel read the same value.
  std::this_thread::sleep_for(1500ms);
  ::kill(busy_pid, SIGSTOP);
  std::this_thread::sleep_for(1500ms);
  auto metrics = HttpGet(port, "/metrics");
  ASSERT_TRUE(metrics);
  const double kernel_cpu = busy.KernelCpuSeconds();
  auto agent_cpu =
      Value(*metrics, "trainscope_pod_cpu_usage_seconds_total", "kt-worker-0");
  ASSERT_TRUE(agent_cpu) << *metrics;
  ASSERT_GT(kernel_cpu, 0.3);  // it really ran
  EXPECT_NEAR(*agent_cpu, kernel_cpu, 0.05 * kernel_cpu);
  EXPECT_NEAR(*Value(*metrics, "trainscope_pod_cpu_limit_cores", "kt-worker-0"),
              0.5, 1e-9);
  auto throttled = Value(*metrics, "trainscope_pod_cpu_throttled_periods_total",
                         "kt-worker-0");
  ASSERT_TRUE(throttled);
  EXPECT_GT(*throttled, 0);

  const double kernel_ws = static_cast<double>(
      holder.KernelMemoryUsageBytes() - holder.KernelInactiveFileBytes());
  auto agent_ws =
      Value(*metrics, "trainscope_pod_memory_working_set_bytes", "kt-ps-0");
  ASSERT_TRUE(agent_ws) << *metrics;
  EXPECT_NEAR(*agent_ws, kernel_ws, 0.05 * kernel_ws);
  EXPECT_GE(*agent_ws, 0.95 * held);
  EXPECT_NEAR(*Value(*metrics, "trainscope_pod_memory_limit_bytes", "kt-ps-0"),
              256ull << 20, 1);

  // The agent's own cost with these pods, for the record.
  auto cycles = Unlabelled(*metrics, "trainscope_sampler_cycles_total");
  auto cpu = Unlabelled(*metrics, "trainscope_sampler_cpu_seconds_total");
  auto rss = Unlabelled(*metrics, "process_resident_memory_bytes");
  if (cycles && cpu && rss && *cycles > 0) {
    RecordProperty("cpu_ms_per_cycle", std::to_string(*cpu / *cycles * 1000));
    RecordProperty("rss_mib", std::to_string(*rss / (1 << 20)));
    std::cout << "agent: " << *cpu / *cycles * 1000 << " ms CPU per cycle, "
              << *rss / (1 << 20) << " MiB RSS\n";
  }

  // The allocator's view of the same process: live bytes fit inside RSS.
  auto heap_in_use = Unlabelled(*metrics, "trainscope_agent_heap_in_use_bytes");
  auto heap_free = Unlabelled(*metrics, "trainscope_agent_heap_free_bytes");
  ASSERT_TRUE(heap_in_use && heap_free && rss) << *metrics;
  EXPECT_LE(*heap_in_use, *rss);
  if (!kSanitizerAllocator) {
    EXPECT_GT(*heap_in_use, 64 << 10);
  }

  // Remove the holder from discovery: its series are gone at the next scrape
  // after the next sample.
  WritePodList(pods, {PodJson(busy, "kt-worker-0")});
  bool gone = false;
  for (int i = 0; i < 40 && !gone; ++i) {
    std::this_thread::sleep_for(250ms);
    auto now = HttpGet(port, "/metrics");
    gone = now && now->find("kt-ps-0") == std::string::npos &&
           now->find("kt-worker-0") != std::string::npos;
  }
  EXPECT_TRUE(gone) << "series of the removed pod are still exported";
}

}  // namespace
}  // namespace trainscope::testing
