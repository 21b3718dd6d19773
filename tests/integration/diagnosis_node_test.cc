// The node view wired end to end: the real agent on a copy of a fixture
// host tree whose pod cgroup gets throttled, then recovers. The diagnosis
// must enter (report, metric, warning log line) and clear again (series
// gone, info log line).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "agent_process.h"
#include "prometheus_support.h"

namespace trainscope::testing {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kFixture =
    fs::path(TRAINSCOPE_SOURCE_DIR) / "tests/fixtures/hosts/v2-systemd";
const char* kWorkerCgroup =
    "sys/fs/cgroup/kubepods.slice/kubepods-burstable.slice/"
    "kubepods-burstable-pod5d327134_2adb_42df_9641_afa0559997d7.slice";

// Rewrites the worker pod's cpu.stat every 20 ms: 100 CFS periods per
// second, 40% of them throttled while `throttled` is set.
class CpuStatWriter {
 public:
  explicit CpuStatWriter(fs::path dir) : dir_(std::move(dir)) {
    thread_ = std::thread([this] { Loop(); });
  }
  ~CpuStatWriter() {
    stop_ = true;
    thread_.join();
  }
  std::atomic<bool> throttled{true};

 private:
  void Loop() {
    const auto start = std::chrono::steady_clock::now();
    double throttled_periods = 0, stalled_usec = 0, last = 0;
    while (!stop_) {
      const double t = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
      // Throttled in 40% of the periods, the pod's tasks wait for CPU 20% of
      // the time (PSI some): the stall is what the step loses.
      if (throttled) {
        throttled_periods += 40 * (t - last);
        stalled_usec += 0.2e6 * (t - last);
      }
      last = t;
      std::ofstream psi(dir_ / "cpu.pressure.tmp");
      psi << "some avg10=0.00 avg60=0.00 avg300=0.00 total="
          << static_cast<uint64_t>(stalled_usec)
          << "\nfull avg10=0.00 avg60=0.00 avg300=0.00 total="
          << static_cast<uint64_t>(stalled_usec / 2) << "\n";
      psi.close();
      fs::rename(dir_ / "cpu.pressure.tmp", dir_ / "cpu.pressure");
      std::ofstream out(dir_ / "cpu.stat.tmp");
      out << "usage_usec " << static_cast<uint64_t>(43260680 + 5e5 * t)
          << "\nuser_usec 30282476\nsystem_usec 12978204\n"
          << "nr_periods " << static_cast<uint64_t>(1000 + 100 * t)
          << "\nnr_throttled " << static_cast<uint64_t>(throttled_periods)
          << "\nthrottled_usec "
          << static_cast<uint64_t>(throttled_periods * 5000) << "\n";
      out.close();
      fs::rename(dir_ / "cpu.stat.tmp", dir_ / "cpu.stat");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  fs::path dir_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// Polls the report until `pred` holds for it or the deadline passes.
template <typename Pred>
std::optional<nlohmann::json> WaitReport(int port, Pred pred,
                                         std::chrono::seconds deadline) {
  auto end = std::chrono::steady_clock::now() + deadline;
  while (std::chrono::steady_clock::now() < end) {
    if (auto body = HttpGet(port, "/api/v1/report")) {
      auto j = nlohmann::json::parse(*body, nullptr, false);
      if (!j.is_discarded() && pred(j)) return j;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return std::nullopt;
}

bool HasThrottled(const nlohmann::json& report) {
  for (const auto& d : report["diagnoses"]) {
    if (d["kind"] == "cpu_throttled" && d["pod"] == "ctr-worker-0") return true;
  }
  return false;
}

TEST(NodeDiagnosisTest, ThrottledPodEntersAndClears) {
  TempDir host;
  fs::copy(kFixture, host.path(),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  CpuStatWriter writer(host.path() / kWorkerCgroup);
  const int port = FreePort();
  AgentProcess agent(
      {"--listen", "127.0.0.1:" + std::to_string(port), "--interval", "0.2",
       "--node-name", "node-a", "--discovery", "file", "--pod-file",
       (host.path() / "pods.json").string(), "--host-proc",
       (host.path() / "proc").string(), "--host-sys",
       (host.path() / "sys").string(), "--cgroup-root",
       (host.path() / "sys/fs/cgroup").string(), "--flows", "off"});
  ASSERT_TRUE(agent.WaitHttpOk(port, "/readyz", std::chrono::seconds(10)))
      << agent.Stderr();

  auto entered = WaitReport(port, HasThrottled, std::chrono::seconds(10));
  ASSERT_TRUE(entered) << agent.Stderr();
  nlohmann::json d;
  for (const auto& x : (*entered)["diagnoses"]) {
    if (x["kind"] == "cpu_throttled") d = x;
  }
  EXPECT_EQ(d["severity"], "warning");
  EXPECT_EQ(d["namespace"], "training");
  EXPECT_EQ(d["training_job"], "ctr");
  EXPECT_NEAR(d["evidence"]["throttled_ratio"].get<double>(), 0.4, 0.08);
  // The cost is the CPU stall (PSI some): 20%, a warning.
  EXPECT_EQ(d["evidence"]["cost_model"], "cpu_pressure");
  EXPECT_NEAR(d["evidence"]["cost_fraction"].get<double>(), 0.2, 0.05);
  EXPECT_FALSE(d["recommendations"].empty());
  EXPECT_FALSE(d["summary"].get<std::string>().empty());
  EXPECT_EQ(d["since"].get<std::string>().size(), 20u);  // RFC 3339, UTC

  auto metrics = HttpGet(port, "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(*metrics,
              HasSubstr("trainscope_diagnosis_active{kind=\"cpu_throttled\","
                        "namespace=\"training\",node=\"node-a\","
                        "pod=\"ctr-worker-0\",severity=\"warning\","
                        "training_job=\"ctr\"} 1"));
  auto text = HttpGet(port, "/api/v1/report?format=text");
  ASSERT_TRUE(text);
  EXPECT_THAT(*text, HasSubstr("cpu_throttled"));
  EXPECT_THAT(agent.Stderr(),
              HasSubstr("[diagnosis] cpu_throttled entered (warning) for "
                        "training/ctr-worker-0"));

  writer.throttled = false;
  auto cleared = WaitReport(
      port, [](const nlohmann::json& r) { return !HasThrottled(r); },
      std::chrono::seconds(10));
  ASSERT_TRUE(cleared) << agent.Stderr();
  // The next render has no series for it.
  metrics = HttpGet(port, "/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(*metrics, Not(HasSubstr("trainscope_diagnosis_active{")));
  EXPECT_THAT(agent.Stderr(), HasSubstr("[diagnosis] cpu_throttled cleared for "
                                        "training/ctr-worker-0"));
}

}  // namespace
}  // namespace trainscope::testing
