// Privileged: a parameter server saturating its CPU limit is diagnosed, and
// the diagnosis carries the pod's top functions from the continuous profile
// (what the PS is doing), end to end through the real agent's report.
#include <gtest/gtest.h>
#include <httplib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent_process.h"
#include "flows_lab.h"
#include "kernel_pod.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(ProfilerEvidenceTest, SaturatedPsDiagnosisNamesItsTopFunctions) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root";
  if (KernelPod::Unified().empty()) GTEST_SKIP() << "no cgroup v2 here";
  const fs::path dir =
      fs::temp_directory_path() /
      ("trainscope-profiler-evidence-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    KernelPod pod;
    pod.SetCpuLimit(0.5);
    nlohmann::json item =
        KernelPodJson(pod, "prof-ev", "ev-ps-0", "198.18.7.20");
    item["metadata"]["labels"] = {{"training.kubeflow.org/job-name", "ev"},
                                  {"training.kubeflow.org/replica-type", "ps"},
                                  {"training.kubeflow.org/replica-index", "0"}};
    std::ofstream(dir / "pods.json") << nlohmann::json{
        {"apiVersion", "v1"},
        {"kind", "PodList"},
        {"metadata", {{"resourceVersion", "1"}}},
        {"items", {item}}}.dump();
    ChildProcess workload({PROFILER_WORKLOAD_BIN, "cpu", "120"},
                          (dir / "workload.log").string());
    pod.MoveIn(workload.pid());
    const int port = FreePort();
    AgentProcess agent({"--listen", "127.0.0.1:" + std::to_string(port),
                        "--interval", "0.5", "--node-name", "node-a",
                        "--discovery", "file", "--pod-file",
                        (dir / "pods.json").string(), "--flows", "off"});
    ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", 10s)) << agent.Stderr();
    nlohmann::json found, report;
    for (int i = 0; i < 120 && found.is_null(); ++i) {
      std::this_thread::sleep_for(250ms);
      auto body = HttpGet(port, "/api/v1/report");
      if (!body) continue;
      report = nlohmann::json::parse(*body, nullptr, false);
      if (report.is_discarded()) continue;
      for (const auto& d : report["diagnoses"]) {
        if (d.value("kind", "") == "parameter_server_cpu_saturated" &&
            d.value("pod", "") == "ev-ps-0" &&
            d["evidence"].contains("top_functions")) {
          found = d;
        }
      }
    }
    ASSERT_FALSE(found.is_null()) << report.dump(1) << agent.Stderr();
    const auto& top = found["evidence"]["top_functions"];
    ASSERT_FALSE(top.empty());
    EXPECT_NE(top[0]["function"].get<std::string>().find("Spin"),
              std::string::npos)
        << found.dump(1);
    EXPECT_GE(top[0]["share"].get<double>(), 0.5);
    EXPECT_GT(found["evidence"]["profile_samples"].get<int64_t>(), 0);
    // The scalar evidence the detector wrote is still there.
    EXPECT_TRUE(found["evidence"].contains("utilization_ratio"));
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace trainscope::testing
