#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "detector_cases.h"
#include "diagnosis/analysis.h"
#include "diagnosis/detectors.h"
#include "diagnosis/exchange_quiet.h"

namespace trainscope::diagnosis {
namespace {

using testing::FindingsOf;
using testing::Key;

// Points every 2 s from 0 to 40 s; the ranks exchange 1 MB/s with each
// neighbour until `stop_s`, then do what their Behaviour says.
constexpr double kDt = 2;
constexpr int kPoints = 21;

struct Behaviour {
  double cpu_cores = 0.01;  // after the stop (1.0 before)
  char state = 'S';         // the main process's state after the stop
  bool no_process = false;  // every process gone
  std::string sends_to;     // keeps sending this peer without an answer
  double write_bytes_per_second = 0;
  bool keeps_exchanging = false;  // an async PS worker that goes on
  double stop_s = -1;             // its own stop (-1: the job's)
  // A worker still starting: it connected (2 kB/s in its first interval)
  // and never exchanged a step since.
  bool only_connected = false;
};

struct Rank {
  std::string name;
  Role role = Role::kWorker;
  std::vector<std::string> peers;
  Behaviour after;
};

void SetState(PodPoint& p, char state, bool none) {
  p.processes_running = state == 'R' && !none ? 1 : 0;
  p.processes_sleeping = (state == 'S' && !none) ? 1 : 0;
  p.processes_disk_sleep = state == 'D' && !none ? 1 : 0;
  p.processes_stopped = state == 'T' && !none ? 1 : 0;
  p.processes_zombie = 0;
}

Window JobWindow(const std::vector<Rank>& ranks, double stop_s,
                 const std::string& job = "ring") {
  Window w;
  for (const Rank& r : ranks) {
    PodTimeline& t = w.pods[Key(r.name)];
    t.meta.namespace_name = "training";
    t.meta.pod = r.name;
    t.meta.training_job = job;
    t.meta.role = r.role;
    t.meta.node = "node-a";
    if (r.role == Role::kPs) w.job_ps[Key(job)].insert(r.name);
    const double stop = r.after.keeps_exchanging
                            ? 1e9
                            : (r.after.stop_s >= 0 ? r.after.stop_s : stop_s);
    double cpu = 0, bytes = 0, sent = 0, written = 0;
    for (int i = 0; i < kPoints; ++i) {
      const double time = i * kDt;
      if (i > 0) {
        const bool going = time <= stop && !r.after.only_connected;
        cpu += kDt * (going ? 1.0 : r.after.cpu_cores);
        bytes += going ? kDt * 1e6 : 0;
        if (r.after.only_connected && i == 1) bytes += kDt * 2e3;
        if (!going && !r.after.sends_to.empty()) sent += kDt * 300;
        if (!going) written += kDt * r.after.write_bytes_per_second;
      }
      PodPoint p;
      p.t = time;
      p.instance = r.name + "-uid";
      p.cpu_usage_seconds = cpu;
      p.io_write_bytes = written;
      SetState(p, time <= stop ? 'R' : r.after.state,
               time > stop && r.after.no_process);
      if (time <= stop && !r.after.only_connected) p.steps_per_second = 4;
      for (const std::string& peer : r.peers) {
        PeerCounters& c = p.peers[Key(peer)];
        c.receive_bytes = bytes;
        c.transmit_bytes = bytes + (peer == r.after.sends_to ? sent : 0);
        w.peer_roles[Key(peer)] = Role::kWorker;
      }
      t.points.push_back(p);
    }
  }
  return w;
}

std::vector<Rank> Ring(const std::map<std::string, Behaviour>& faults) {
  std::vector<Rank> ranks = {{"rank-0", Role::kWorker, {"rank-1", "rank-2"}},
                             {"rank-1", Role::kWorker, {"rank-0", "rank-2"}},
                             {"rank-2", Role::kWorker, {"rank-0", "rank-1"}}};
  for (Rank& r : ranks)
    if (auto f = faults.find(r.name); f != faults.end()) r.after = f->second;
  return ranks;
}

std::vector<Rank> PsJob(const std::map<std::string, Behaviour>& faults) {
  std::vector<Rank> ranks = {
      {"ps-0", Role::kPs, {"worker-0", "worker-1", "worker-2"}},
      {"worker-0", Role::kWorker, {"ps-0"}},
      {"worker-1", Role::kWorker, {"ps-0"}},
      {"worker-2", Role::kWorker, {"ps-0"}}};
  for (Rank& r : ranks)
    if (auto f = faults.find(r.name); f != faults.end()) r.after = f->second;
  return ranks;
}

// A TF2 coordinator writing the initial variables to the PS while both
// workers wait for their first closures.
std::vector<Rank> CoordinatorBusyWithThePs() {
  return {{"ps-0", Role::kPs, {"chief-0"}, {.keeps_exchanging = true}},
          {"chief-0", Role::kChief, {"ps-0"}, {.keeps_exchanging = true}},
          {"worker-0", Role::kWorker, {"ps-0"}},
          {"worker-1", Role::kWorker, {"ps-0"}}};
}

// A node view holding one worker and a PS that goes on serving the job's
// other workers, which run on other nodes.
std::vector<Rank> LoneWorkerBesideAServingPs() {
  return {
      {"ps-0",
       Role::kPs,
       {"worker-0", "worker-1", "worker-2"},
       {.keeps_exchanging = true}},
      {"worker-1", Role::kWorker, {"ps-0"}, {.cpu_cores = 1, .state = 'R'}}};
}

// A TF2 worker that got the step function from the coordinator and traces
// it while the other workers step: it never exchanged with the PS.
std::vector<Rank> WorkerTracingItsFirstStep() {
  return {
      {"ps-0", Role::kPs, {"worker-0", "worker-2"}, {.keeps_exchanging = true}},
      {"worker-0", Role::kWorker, {"ps-0"}, {.keeps_exchanging = true}},
      {"worker-2", Role::kWorker, {"ps-0"}, {.keeps_exchanging = true}},
      {"chief-0", Role::kChief, {"worker-1"}, {.keeps_exchanging = true}},
      {"worker-1",
       Role::kWorker,
       {"chief-0"},
       {.cpu_cores = 1, .state = 'R', .stop_s = 10}}};
}

struct StallCase {
  const char* name;
  std::vector<Rank> ranks;
  double stop_s;
  // Empty: no training_stalled.
  std::optional<Severity> severity;
  std::string pod;     // the suspect ("" = the job)
  std::string reason;  // suspect_reason
};

class TrainingStalledTest : public ::testing::TestWithParam<StallCase> {};

TEST_P(TrainingStalledTest, NamesTheStallAndItsSuspect) {
  const StallCase& c = GetParam();
  const auto found = FindingsOf(kTrainingStalled, JobWindow(c.ranks, c.stop_s));
  if (!c.severity) {
    EXPECT_TRUE(found.empty()) << found.front().diagnosis.summary;
    return;
  }
  ASSERT_EQ(found.size(), 1u);
  const Diagnosis& d = found.front().diagnosis;
  EXPECT_EQ(d.severity, *c.severity);
  EXPECT_EQ(d.pod, c.pod) << d.summary;
  EXPECT_EQ(d.training_job, "ring");
  EXPECT_EQ(d.evidence.at("suspect_reason"), c.reason) << d.evidence.dump();
  EXPECT_GE(d.evidence.at("stalled_seconds").get<double>(), 10);
  EXPECT_FALSE(d.evidence.at("ranks").empty());
  EXPECT_EQ(found.front().level, Finding::Level::kEvent);
}

// The job stops at 20 s: 20 s of quiet by the newest point (40 s).
INSTANTIATE_TEST_SUITE_P(
    Cases, TrainingStalledTest,
    ::testing::Values(
        StallCase{"healthy", Ring({}), 100, std::nullopt, "", ""},
        StallCase{"quiet_less_than_ten_seconds", Ring({}), 32, std::nullopt, "",
                  ""},
        StallCase{"busy_loop_rank",
                  Ring({{"rank-1", {.cpu_cores = 1.0, .state = 'R'}}}), 20,
                  Severity::kCritical, "rank-1", "computing"},
        // A loaded node gives the spinning rank less than half a core; it
        // still stands out of ranks that idle.
        StallCase{"busy_loop_rank_on_a_loaded_node",
                  Ring({{"rank-1", {.cpu_cores = 0.3, .state = 'S'}}}), 20,
                  Severity::kCritical, "rank-1", "computing"},
        StallCase{"sigstop_rank", Ring({{"rank-2", {.state = 'T'}}}), 20,
                  Severity::kCritical, "rank-2", "stopped"},
        StallCase{"blocked_io_rank", Ring({{"rank-0", {.state = 'D'}}}), 20,
                  Severity::kCritical, "rank-0", "blocked_io"},
        StallCase{"link_blackhole", Ring({{"rank-1", {.sends_to = "rank-2"}}}),
                  20, Severity::kCritical, "rank-1", "link_dead"},
        StallCase{"exited_rank", Ring({{"rank-2", {.no_process = true}}}), 20,
                  Severity::kCritical, "rank-2", "exited"},
        StallCase{"all_wait", Ring({}), 20, Severity::kCritical, "",
                  "all_waiting"},
        StallCase{
            "checkpoint_pause",
            Ring({{"rank-0", {.state = 'D', .write_bytes_per_second = 50e6}}}),
            20, std::nullopt, "", ""},
        StallCase{"every_rank_computing_is_a_pause",
                  Ring({{"rank-0", {.cpu_cores = 1, .state = 'R'}},
                        {"rank-1", {.cpu_cores = 1, .state = 'R'}},
                        {"rank-2", {.cpu_cores = 1, .state = 'R'}}}),
                  20, std::nullopt, "", ""},
        StallCase{"finished_job",
                  Ring({{"rank-0", {.no_process = true}},
                        {"rank-1", {.no_process = true}},
                        {"rank-2", {.no_process = true}}}),
                  20, std::nullopt, "", ""},
        StallCase{"async_worker_stops_alone",
                  PsJob({{"worker-0", {.keeps_exchanging = true}},
                         {"worker-1", {.cpu_cores = 1, .state = 'R'}},
                         {"worker-2", {.keeps_exchanging = true}},
                         {"ps-0", {.keeps_exchanging = true}}}),
                  20, Severity::kWarning, "worker-1", "computing"},
        StallCase{"coordinator_busy_with_the_ps_is_no_worker_stall",
                  CoordinatorBusyWithThePs(), 20, std::nullopt, "", ""},
        StallCase{"lone_worker_beside_a_ps_serving_the_others",
                  LoneWorkerBesideAServingPs(), 20, Severity::kWarning,
                  "worker-1", "computing"},
        StallCase{"worker_still_starting_while_the_others_step",
                  PsJob({{"worker-0", {.keeps_exchanging = true}},
                         {"worker-1", {.only_connected = true}},
                         {"worker-2", {.keeps_exchanging = true}},
                         {"ps-0", {.keeps_exchanging = true}}}),
                  20, std::nullopt, "", ""},
        StallCase{"worker_tracing_its_first_step", WorkerTracingItsFirstStep(),
                  20, std::nullopt, "", ""},
        StallCase{"ps_stopped_stalls_the_job",
                  PsJob({{"ps-0", {.state = 'T'}}}), 20, Severity::kCritical,
                  "ps-0", "stopped"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

// A job whose earlier pauses were long (a slow data loader) gets twice the
// longest as its line: a 14 s quiet after an 8 s pause is no stall.
TEST(TrainingStalled, EarlierPausesRaiseTheLine) {
  std::vector<Rank> ranks = Ring({});
  Window w = JobWindow(ranks, 26);
  for (auto& [_, t] : w.pods) {
    // Nothing moves from 6 to 14 s (an 8 s pause), then steps resume.
    double shift = 0;
    for (auto& p : t.points) {
      if (p.t > 6 && p.t <= 14) shift += kDt * 1e6;
      for (auto& [peer, c] : p.peers) {
        c.receive_bytes -= shift;
        c.transmit_bytes -= shift;
      }
    }
  }
  EXPECT_TRUE(FindingsOf(kTrainingStalled, w).empty());
}

TEST(ExchangeQuiet, FindsTheLastExchangeAndTheTail) {
  const Window w =
      JobWindow(Ring({{"rank-1", {.cpu_cores = 1.0, .state = 'R'}}}), 20);
  const auto& pts = w.pods.at(Key("rank-1")).points;
  const auto q = QuietTailOf(pts);
  ASSERT_TRUE(q);
  EXPECT_DOUBLE_EQ(q->since_t, 20);
  EXPECT_DOUBLE_EQ(q->seconds, 20);
  EXPECT_NEAR(q->cpu_cores.value_or(0), 1.0, 1e-9);
  EXPECT_DOUBLE_EQ(q->states.running, 1);
  // Two peers, 1 MB/s each way with each.
  EXPECT_DOUBLE_EQ(q->reference_bytes_per_second, 4e6);
}

TEST(ExchangeQuiet, EmptyWithoutAnExchangeOrPoints) {
  EXPECT_FALSE(QuietTailOf({}));
  PodPoint a, b;
  a.t = 0;
  b.t = 2;
  a.peers["training/x"] = {10, 10};
  b.peers["training/x"] = {100, 100};  // 90 B/s: below the floor
  const std::vector<PodPoint> pts = {a, b};
  const auto q = QuietTailOf(pts);
  ASSERT_TRUE(q);
  EXPECT_FALSE(q->anchored);
  EXPECT_DOUBLE_EQ(q->since_t, 0);
}

// The first training_stalled among `findings`, null when none.
const Finding* FirstStall(const std::vector<Finding>& findings) {
  auto it = std::find_if(
      findings.begin(), findings.end(),
      [](const Finding& f) { return f.diagnosis.kind == kTrainingStalled; });
  return it == findings.end() ? nullptr : &*it;
}

// A job quiet for longer than the node view's history: the history alone
// shows no exchange, the memory knows when the last one was.
TEST(ExchangeMemory, AnchorsAStallOlderThanTheHistory) {
  const Window full =
      JobWindow(Ring({{"rank-1", {.cpu_cores = 1.0, .state = 'R'}}}), 20);
  ExchangeMemory memory;
  memory.Observe(full);
  EXPECT_EQ(memory.LastExchange(Key("rank-1")), 20);
  const Window recent = Tail(full, 6);  // 30 s to 40 s: all quiet

  const auto forgotten = Evaluate(recent, DiagnosisSettings{});
  EXPECT_EQ(FirstStall(forgotten.findings), nullptr);

  memory.Observe(recent);
  const auto remembered = Evaluate(recent, DiagnosisSettings{}, &memory);
  const Finding* stall = FirstStall(remembered.findings);
  ASSERT_NE(stall, nullptr);
  EXPECT_EQ(stall->diagnosis.pod, "rank-1");
  EXPECT_DOUBLE_EQ(stall->diagnosis.evidence.at("stalled_seconds"), 20);
}

// A rank at its CPU limit while its peers use 0.3 core: a straggler by
// cause, unless a rank of its job stopped (`stopped`, at 34 s of 40: its
// exchange over the window is still like the others').
Window BusyRankBeside(std::vector<Rank> ranks, const std::string& busy,
                      const std::string& stopped) {
  for (Rank& r : ranks) {
    r.after.keeps_exchanging = r.name != stopped;
    if (r.name == stopped) r.after.stop_s = 34;
  }
  Window w = JobWindow(ranks, 100);
  for (auto& [key, t] : w.pods) {
    t.meta.spec_cpu_limit_cores = 1.0;
    if (key == Key(busy) || t.meta.role == Role::kPs) continue;
    for (PodPoint& p : t.points) *p.cpu_usage_seconds *= 0.3;
  }
  return w;
}

// Around a stop the ranks' figures compare nothing: a ring's ranks wait on
// the stopped one, and the stopped worker itself spins or blocks.
TEST(TrainingStalled, NoStragglerByCauseAroundAStop) {
  DiagnosisSettings s;
  s.window_samples = kPoints;  // the window is the recent one: 2 s apart
  auto findings = [&](std::string_view kind, std::vector<Rank> ranks,
                      const std::string& busy, const std::string& stopped) {
    return FindingsOf(kind, BusyRankBeside(std::move(ranks), busy, stopped), s);
  };
  EXPECT_EQ(findings(kAllreduceStraggler, Ring({}), "rank-0", "").size(), 1u);
  EXPECT_TRUE(
      findings(kAllreduceStraggler, Ring({}), "rank-0", "rank-1").empty());
  EXPECT_EQ(findings(kStragglerWorker, PsJob({}), "worker-1", "").size(), 1u);
  EXPECT_TRUE(
      findings(kStragglerWorker, PsJob({}), "worker-1", "worker-1").empty());
}

// An asynchronous worker quiet for longer than the history showed its steps
// before it: it is stalled, not still starting.
TEST(ExchangeMemory, AnchorsAnAsyncWorkerStalledLongerThanTheHistory) {
  const Window full =
      JobWindow(PsJob({{"worker-0", {.keeps_exchanging = true}},
                       {"worker-1", {.cpu_cores = 1, .state = 'R'}},
                       {"worker-2", {.keeps_exchanging = true}},
                       {"ps-0", {.keeps_exchanging = true}}}),
                20);
  ExchangeMemory memory;
  memory.Observe(full);
  const Window recent = Tail(full, 6);
  const auto remembered = Evaluate(recent, DiagnosisSettings{}, &memory);
  const Finding* stall = FirstStall(remembered.findings);
  ASSERT_NE(stall, nullptr);
  EXPECT_EQ(stall->diagnosis.pod, "worker-1");
  EXPECT_EQ(stall->diagnosis.severity, Severity::kWarning);
}

// A pod with no processes, a restart mid-tail (a new instance) and a peer
// forgotten between points never crash nor count bytes that did not move.
TEST(ExchangeQuiet, HostileTimelines) {
  std::vector<PodPoint> pts(4);
  for (int i = 0; i < 4; ++i) {
    pts[i].t = i * 2.0;
    pts[i].instance = i < 2 ? "a" : "b";
    pts[i].peers["training/x"] = {i * 1e6, i * 1e6};
  }
  pts[3].peers.clear();
  pts[2].processes_running = 0;
  pts[2].processes_sleeping = 0;
  pts[2].processes_disk_sleep = 0;
  pts[2].processes_stopped = 0;
  pts[2].processes_zombie = 0;
  const auto q = QuietTailOf(pts);
  ASSERT_TRUE(q);
  EXPECT_DOUBLE_EQ(q->since_t, 2);
  EXPECT_DOUBLE_EQ(q->seconds, 4);
  EXPECT_DOUBLE_EQ(q->states.none, 1);
}

}  // namespace
}  // namespace trainscope::diagnosis
