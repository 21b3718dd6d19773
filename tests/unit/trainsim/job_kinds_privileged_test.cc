// The second-edition job kinds on real netns and traffic (root only): ring
// allreduce, synchronous PS with chief and evaluator, and program pods, each
// through `trainsim run --ground-truth-json`. Each test removes its run in
// TearDown, also when an assertion fails.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cleanup.h"
#include "exec.h"
#include "layout.h"

namespace trainsim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

class JobKindsPrivilegedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) GTEST_SKIP() << "needs root";
    run_id_ = NewRunId();
    dir_ = ::testing::TempDir() + "/trainsim-kinds-" + run_id_;
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (run_id_.empty()) return;
    for (const std::string& l : CleanupRun(run_id_, false))
      ADD_FAILURE() << "left: " << l;
    fs::remove_all(dir_);
  }

  // Runs the scenario; returns the ground truth JSON, `output` the log.
  json Run(const std::string& scenario, std::string* output = nullptr) {
    const std::string path = dir_ + "/scenario.json";
    const std::string truth = dir_ + "/truth.json";
    std::ofstream(path) << scenario;
    CommandResult r =
        RunCommand({TRAINSIM_BIN, "run", "--scenario", path, "--run-id",
                    run_id_, "--ground-truth-json", truth},
                   std::chrono::seconds(90));
    if (output) *output = r.output;
    EXPECT_EQ(r.exit_code, 0) << r.output;
    std::ifstream in(truth);
    json j = json::parse(in, nullptr, false);
    EXPECT_FALSE(j.is_discarded()) << r.output;
    return j;
  }

  static uint64_t Sent(const json& t, const std::string& a,
                       const std::string& b) {
    const json& peers = t["pods"][a]["peers"];
    return peers.contains(b) ? peers[b]["sent_bytes"].get<uint64_t>() : 0;
  }

  std::string run_id_, dir_;
};

// 4 ranks, 400000-byte gradient: each step every rank sends 2*3 chunks of
// 100000 bytes to the next rank only, and all ranks complete the same
// number of steps (the ring gates them).
TEST_F(JobKindsPrivilegedTest, RingAllreduceMovesChunksToTheNextRankOnly) {
  json t = Run(R"({"name": "ring", "duration_s": 4, "interval_s": 1,
    "jobs": [{"name": "ar", "kind": "allreduce", "workers": 4,
              "gradient_bytes": 400000, "step_ms": 50, "compute_ms": 2}]})");
  ASSERT_TRUE(t.is_object());
  EXPECT_TRUE(t["consistent"].get<bool>());
  const uint64_t per_step = 6 * 100000;
  std::vector<uint64_t> steps;
  for (int r = 0; r < 4; ++r) {
    const std::string me = "ar-worker-" + std::to_string(r);
    const std::string next = "ar-worker-" + std::to_string((r + 1) % 4);
    const std::string across = "ar-worker-" + std::to_string((r + 2) % 4);
    const uint64_t n = t["pods"][me]["steps"].get<uint64_t>();
    steps.push_back(n);
    EXPECT_GT(n, 5u) << me;
    const uint64_t sent = Sent(t, me, next);
    // Whole steps, plus at most the rounds of the step cut by the stop.
    EXPECT_GE(sent, n * per_step) << me;
    EXPECT_LE(sent, (n + 1) * per_step) << me;
    EXPECT_EQ(Sent(t, me, across), 0u) << me << " sent across the ring";
    EXPECT_EQ(t["pods"][me]["role"], "worker");
  }
  const auto [fewest, most] = std::minmax_element(steps.begin(), steps.end());
  EXPECT_LE(*most - *fewest, 1u);
}

// ps_sync: a slow worker (0.05 cores, 20 ms compute) holds every worker to
// its pace; the chief and evaluator exchange with the PS.
TEST_F(JobKindsPrivilegedTest, SyncPsWorkersWaitForTheSlowest) {
#ifdef TRAINSCOPE_TEST_UNDER_TSAN
  GTEST_SKIP() << "counts the steps that fit in 5 s: under TSan's slowdown the "
                  "clock decides, not the pacing";
#endif
  json t = Run(R"({"name": "sync", "duration_s": 5, "interval_s": 1,
    "jobs": [{"name": "sp", "kind": "ps_sync", "ps": 2, "workers": 3,
              "chief": 1, "evaluator": 1, "step_ms": 50, "compute_ms": 20,
              "variables": [{"name": "w", "bytes": 50000, "count": 2}]}],
    "faults": [{"kind": "cpu_limit", "pod": "sp-worker-2", "cores": 0.05}]})");
  ASSERT_TRUE(t.is_object());
  EXPECT_TRUE(t["consistent"].get<bool>());
  const uint64_t slow = t["pods"]["sp-worker-2"]["steps"].get<uint64_t>();
  EXPECT_GT(slow, 0u);
  for (const std::string w : {"sp-worker-0", "sp-worker-1"}) {
    const uint64_t n = t["pods"][w]["steps"].get<uint64_t>();
    // Unsynchronised, the fast workers would do ~10x the slow one's steps.
    EXPECT_LE(n, slow + 1) << w;
    EXPECT_GE(n + 1, slow) << w;
  }
  EXPECT_GT(Sent(t, "sp-ps-0", "sp-chief-0"), 0u);
  EXPECT_GT(Sent(t, "sp-worker-0", "sp-chief-0"), 0u);  // step results
  EXPECT_GT(Sent(t, "sp-ps-1", "sp-evaluator-0"), 0u);
  EXPECT_EQ(t["pods"]["sp-chief-0"]["role"], "chief");
  EXPECT_EQ(t["pods"]["sp-evaluator-0"]["role"], "evaluator");
}

// A program pod: the worker (a Python one-liner) reads TF_CONFIG, sends
// 1 MB to PS 0 and writes 7 to TRAINSIM_STEPS_FILE; the kernel's counts and
// the step file are the ground truth.
TEST_F(JobKindsPrivilegedTest, ProgramPodsGetEnvironmentAndKernelCounts) {
  const char* prog =
      "import json,os,socket,time,sys\\n"
      "c=json.loads(os.environ['TF_CONFIG'])\\n"
      "me=c['task']\\n"
      "port=int(os.environ['PORT_FROM_ARGV'])\\n"
      "if me['type']=='ps':\\n"
      "  s=socket.socket(); "
      "s.setsockopt(socket.SOL_SOCKET,socket.SO_REUSEADDR,1)\\n"
      "  s.bind(('0.0.0.0',port)); s.listen(); a,_=s.accept()\\n"
      "  n=0\\n"
      "  while n<1000000: n+=len(a.recv(65536))\\n"
      "  a.sendall(b'k'*1000)\\n"
      "else:\\n"
      "  host,p=c['cluster']['ps'][0].split(':')\\n"
      "  while True:\\n"
      "    try: s=socket.create_connection((host,int(p))); break\\n"
      "    except OSError: time.sleep(0.1)\\n"
      "  s.sendall(b'x'*1000000); n=0\\n"
      "  while n<1000: n+=len(s.recv(65536))\\n"
      "  open(os.environ['TRAINSIM_STEPS_FILE'],'w').write('7\\\\n')\\n"
      "time.sleep(60)\\n";
  std::string scenario =
      std::string(R"({"name": "prog", "duration_s": 10, "interval_s": 1,
    "jobs": [{"name": "pg", "ps": 1, "workers": 1, "port": 2222,
              "program": {"argv": ["python3", "-c", ")") +
      prog + R"("], "env": {"PORT_FROM_ARGV": "${PORT}"}}}]})";
  std::string out;
  json t = Run(scenario, &out);
  ASSERT_TRUE(t.is_object());
  EXPECT_EQ(t["pods"]["pg-worker-0"]["steps"], 7) << out;
  // Kernel counts: tcp_info's SYN and FIN sequence numbers make them
  // differ from the payload by a byte or two.
  auto near = [](uint64_t got, uint64_t want) {
    return got + 2 >= want && got <= want + 2;
  };
  EXPECT_PRED2(near, Sent(t, "pg-worker-0", "pg-ps-0"), 1000000u);
  EXPECT_PRED2(near, Sent(t, "pg-ps-0", "pg-worker-0"), 1000u);
  EXPECT_PRED2(near,
               t["pods"]["pg-ps-0"]["peers"]["pg-worker-0"]["received_bytes"]
                   .get<uint64_t>(),
               1000000u);
}

TEST_F(JobKindsPrivilegedTest, ProgramThatEndsEarlyIsReported) {
  std::string out;
  Run(R"({"name": "early", "duration_s": 3, "interval_s": 1,
    "jobs": [{"name": "ee", "ps": 0, "workers": 1,
              "program": {"argv": ["sh", "-c", "echo bye from ${POD_NAME}; exit 3"]}}]})",
      &out);
  EXPECT_NE(out.find("bye from ee-worker-0"), std::string::npos) << out;
  EXPECT_NE(out.find("ended with exit code 3"), std::string::npos) << out;
}

}  // namespace
}  // namespace trainsim
