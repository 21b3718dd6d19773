// End to end: the real agent binary on each fixture host tree, with file
// discovery, scraped over HTTP; /metrics must equal the checked-in golden
// file once volatile lines are dropped. Regenerate the goldens with
//   TRAINSCOPE_UPDATE_GOLDEN=1 ctest -R Golden
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "agent_process.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;

// Lines that change from run to run or machine to machine.
bool Volatile(const std::string& line) {
  static const char* kPrefixes[] = {
      "trainscope_build_info",
      "trainscope_collector_duration_seconds",
      "trainscope_last_sample_timestamp_seconds",
      "trainscope_discovery_last_success_timestamp_seconds",
      "trainscope_sampler_",
      "trainscope_render_duration_seconds",
      "trainscope_scrapes_total",
      "trainscope_http_",
      "trainscope_agent_heap_",
      // Seconds since the agent first saw each job: how many evaluations
      // ran before the scrape (goodput_test pins the values).
      "trainscope_job_",
      "process_",
  };
  std::string name = line;
  if (name.rfind("# ", 0) == 0) {
    // "# HELP name ..." / "# TYPE name ...": judge by the metric name.
    std::istringstream in(line);
    std::string hash, kind;
    in >> hash >> kind >> name;
  }
  for (const char* prefix : kPrefixes) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

std::string Stable(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (!Volatile(line)) out += line + "\n";
  }
  return out;
}

class GoldenTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenTest, MetricsMatchGolden) {
  const fs::path host = fs::path(TRAINSCOPE_SOURCE_DIR) / "tests" / "fixtures" /
                        "hosts" / GetParam();
  const fs::path golden = fs::path(TRAINSCOPE_SOURCE_DIR) / "tests" / "golden" /
                          (GetParam() + ".prom");
  // Layouts with an nvml.json run the fake NVML, which pins the GPU series
  // (devices and per-pod attribution through the fixture's /proc) too.
  // Flows and the profiler need a live kernel and are covered by their own
  // tests.
  const fs::path nvml_json = host / "nvml.json";
  const bool gpu = fs::exists(nvml_json);
  const int port = FreePort();
  AgentProcess agent(
      {"--listen", "127.0.0.1:" + std::to_string(port), "--interval", "0.2",
       "--node-name", "node-a", "--discovery", "file", "--pod-file",
       (host / "pods.json").string(), "--host-proc", (host / "proc").string(),
       "--host-sys", (host / "sys").string(), "--cgroup-root",
       (host / "sys" / "fs" / "cgroup").string(), "--flows", "off",
       "--profiler", "off",
       // Every fixture pod, so each cgroup layout's non-training pods
       // (BestEffort, Burstable) stay pinned; the default filter has its
       // own test (pod_filter_test.cc).
       "--pod-filter", "all", "--nvml-library",
       gpu ? TRAINSCOPE_FAKE_NVML : "/nonexistent/libnvidia-ml.so.1"},
      {"TRAINSCOPE_FAKE_NVML_CONFIG=" + nvml_json.string()});
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", std::chrono::seconds(10)))
      << agent.Stderr();
  auto body = HttpGet(port, "/metrics");
  ASSERT_TRUE(body.has_value());
  std::string actual = Stable(*body);

  if (std::getenv("TRAINSCOPE_UPDATE_GOLDEN")) {
    std::ofstream(golden) << actual;
    GTEST_SKIP() << "golden file rewritten: " << golden;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << "missing " << golden
                  << " (run with TRAINSCOPE_UPDATE_GOLDEN=1)";
  std::stringstream expected;
  expected << in.rdbuf();
  EXPECT_EQ(actual, expected.str()) << "agent stderr:\n" << agent.Stderr();
}

INSTANTIATE_TEST_SUITE_P(Layouts, GoldenTest,
                         ::testing::Values("v2-systemd", "v2-cgroupfs",
                                           "v1-systemd", "v1-cgroupfs",
                                           "hybrid-systemd"),
                         [](const auto& param_info) {
                           std::string name = param_info.param;
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace trainscope::testing
