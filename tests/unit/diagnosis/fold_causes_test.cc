// One problem, one diagnosis: a straggler and the single-pod diagnosis of
// the same pod that makes it one are one report entry (docs/diagnosis.md).
#include "diagnosis/fold_causes.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "diagnosis/runner.h"

namespace trainscope::diagnosis {
namespace {

using Clock = std::chrono::system_clock;
const Clock::time_point kT0 =
    Clock::time_point{} + std::chrono::hours(24 * 365 * 55);

struct Entry {
  std::string_view kind;
  std::string pod;
  Severity severity = Severity::kWarning;
  double speedup = 1.2;
};

Diagnosis Make(const Entry& e, int since_s = 0) {
  Diagnosis d;
  d.kind = std::string(e.kind);
  d.severity = e.severity;
  d.namespace_name = "training";
  d.training_job = "rank";
  d.pod = e.pod;
  d.since = kT0 + std::chrono::seconds(since_s);
  d.summary = d.kind + " on " + e.pod + ".";
  d.evidence = {{"expected_speedup", e.speedup},
                {"cost_fraction", 1 - 1 / e.speedup},
                {"cost_model", d.kind + "_model"}};
  d.recommendations = {"Fix " + d.pod + " (" + d.kind + ").", "Shared advice."};
  return d;
}

constexpr Severity kInfo = Severity::kInfo;
constexpr Severity kCritical = Severity::kCritical;

// The report entries after the fold: "kind pod [link=kind]", in report
// order.
struct FoldCase {
  const char* name;
  std::vector<Entry> active;
  std::vector<std::string> expected;
};

std::vector<std::string> Describe(const std::vector<Diagnosis>& ds) {
  std::vector<std::string> out;
  for (const auto& d : ds) {
    std::string s = d.kind + " " + d.pod;
    for (const char* link : {"caused_by", "slows_job"}) {
      if (d.evidence.contains(link)) {
        s +=
            std::string(" ") + link + "=" + d.evidence[link].get<std::string>();
      }
    }
    out.push_back(s);
  }
  std::sort(out.begin(), out.end());
  return out;
}

class FoldCasesTest : public ::testing::TestWithParam<FoldCase> {};

TEST_P(FoldCasesTest, OneEntryPerProblem) {
  std::vector<Diagnosis> active;
  for (const auto& e : GetParam().active) active.push_back(Make(e));
  auto expected = GetParam().expected;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(Describe(FoldSamePodCauses(active)), expected);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, FoldCasesTest,
    ::testing::Values(
        // straggler.json, cluster-straggler.json, ps-sync-straggler.json:
        // a CPU limit cut to a few hundredths of a core.
        FoldCase{"throttling_folds_into_the_straggler",
                 {{kStragglerWorker, "w3"}, {kCpuThrottled, "w3"}},
                 {"straggler_worker w3 caused_by=cpu_throttled"}},
        // allreduce-straggler.json, realfw-torch-ddp-straggler.json.
        FoldCase{"throttling_folds_into_the_allreduce_straggler",
                 {{kAllreduceStraggler, "w2"}, {kCpuThrottled, "w2"}},
                 {"allreduce_straggler w2 caused_by=cpu_throttled"}},
        // The held-out case of issue 31: a worker under memory pressure.
        FoldCase{"straggler_folds_into_memory_pressure",
                 {{kStragglerWorker, "w1"}, {kMemoryPressure, "w1"}},
                 {"memory_pressure w1 slows_job=straggler_worker"}},
        FoldCase{"allreduce_straggler_folds_into_memory_pressure",
                 {{kMemoryPressure, "w1"}, {kAllreduceStraggler, "w1"}},
                 {"memory_pressure w1 slows_job=allreduce_straggler"}},
        // input-io-bound.json.
        FoldCase{"straggler_folds_into_input_io_bound",
                 {{kStragglerWorker, "w1"}, {kInputIoBound, "w1"}},
                 {"input_io_bound w1 slows_job=straggler_worker"}},
        FoldCase{"straggler_folds_into_its_own_saturated_link",
                 {{kStragglerWorker, "w1"}, {kNetworkSaturated, "w1"}},
                 {"network_saturated w1 slows_job=straggler_worker"}},
        // crash-restarts.json: a restarted worker exchanged less (it was
        // down); the restart comes before the memory it may have run out of.
        FoldCase{"straggler_folds_into_its_restart",
                 {{kStragglerWorker, "w1"},
                  {kMemoryPressure, "w1"},
                  {kPodRestarting, "w1"}},
                 {"pod_restarting w1 slows_job=straggler_worker",
                  "memory_pressure w1"}},
        // IO before memory; the throttling stays its own entry.
        FoldCase{"one_keeper_per_straggler",
                 {{kStragglerWorker, "w1"},
                  {kMemoryPressure, "w1"},
                  {kInputIoBound, "w1"},
                  {kCpuThrottled, "w1"}},
                 {"input_io_bound w1 slows_job=straggler_worker",
                  "memory_pressure w1", "cpu_throttled w1"}},
        FoldCase{"other_pods_stay_apart",
                 {{kStragglerWorker, "w3"},
                  {kCpuThrottled, "w2"},
                  {kMemoryPressure, "ps-1"}},
                 {"straggler_worker w3", "cpu_throttled w2",
                  "memory_pressure ps-1"}},
        // throttled-worker.json: harmless throttling (info) beside a
        // straggler is context, never hidden behind it.
        FoldCase{"info_cause_stays",
                 {{kStragglerWorker, "w0"}, {kCpuThrottled, "w0", kInfo}},
                 {"straggler_worker w0", "cpu_throttled w0"}},
        FoldCase{"info_straggler_stays",
                 {{kStragglerWorker, "w1", kInfo}, {kMemoryPressure, "w1"}},
                 {"straggler_worker w1", "memory_pressure w1"}},
        // A node's uplink (no pod) is no pod's cause.
        FoldCase{"node_link_stays",
                 {{kStragglerWorker, "w1"}, {kNetworkSaturated, ""}},
                 {"straggler_worker w1", "network_saturated "}},
        // Only stragglers fold: a hot PS and its throttling are judged
        // apart (other owners' kinds untouched).
        FoldCase{"no_straggler_no_fold",
                 {{kHotParameterServer, "ps-0"},
                  {kCpuThrottled, "ps-0"},
                  {kPsCpuSaturated, "ps-0"}},
                 {"hot_parameter_server ps-0", "cpu_throttled ps-0",
                  "parameter_server_cpu_saturated ps-0"}},
        // hang-allreduce.json: a rank spinning at its limit is throttled and
        // the ring's straggler; the stop is the problem.
        FoldCase{"a_stall_takes_in_its_symptoms",
                 {{kTrainingStalled, "w1", kCritical},
                  {kAllreduceStraggler, "w1"},
                  {kCpuThrottled, "w1"},
                  {kAllreduceSlowLink, "w2"}},
                 {"training_stalled w1"}},
        // Restarts, GPU errors and memory pressure are causes, never folded.
        FoldCase{"a_stall_keeps_the_causes",
                 {{kTrainingStalled, "", kCritical},
                  {kPodRestarting, "w1"},
                  {kGpuError, "w2"},
                  {kMemoryPressure, "w0"}},
                 {"training_stalled ", "pod_restarting w1", "gpu_error w2",
                  "memory_pressure w0"}},
        // One async worker's stall (warning) takes in only its own pod's.
        FoldCase{"a_workers_stall_takes_in_its_own",
                 {{kTrainingStalled, "w1"},
                  {kStragglerWorker, "w1"},
                  {kStragglerWorker, "w2"}},
                 {"training_stalled w1", "straggler_worker w2"}}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(FoldCausesTest, SameNameInAnotherNamespaceIsAnotherPod) {
  Diagnosis other = Make({kCpuThrottled, "w3"});
  other.namespace_name = "research";
  auto out = FoldSamePodCauses({Make({kStragglerWorker, "w3"}), other});
  EXPECT_EQ(out.size(), 2u);
}

TEST(FoldCausesTest, KeptEntryCarriesTheFoldedOne) {
  const Diagnosis straggler = Make({kStragglerWorker, "w1", kCritical, 1.6}, 0);
  const Diagnosis memory =
      Make({kMemoryPressure, "w1", Severity::kWarning, 1.1}, 30);
  auto out = FoldSamePodCauses({straggler, memory});
  ASSERT_EQ(out.size(), 1u);
  const Diagnosis& d = out[0];
  EXPECT_EQ(d.kind, kMemoryPressure);
  // Its own `since`, as the engine held it.
  EXPECT_EQ(d.since, memory.since);
  // The problem is as severe and costly as its worse reading.
  EXPECT_EQ(d.severity, kCritical);
  EXPECT_DOUBLE_EQ(d.evidence["expected_speedup"].get<double>(), 1.6);
  EXPECT_EQ(d.evidence["cost_model"], "straggler_worker_model");
  EXPECT_EQ(d.evidence["cost_from"], "straggler_worker");
  EXPECT_EQ(d.evidence["slows_job"], "straggler_worker");
  ASSERT_EQ(d.evidence["folded"].size(), 1u);
  const auto& folded = d.evidence["folded"][0];
  EXPECT_EQ(folded["kind"], "straggler_worker");
  EXPECT_EQ(folded["severity"], "critical");
  EXPECT_EQ(folded["summary"], straggler.summary);
  EXPECT_DOUBLE_EQ(folded["evidence"]["expected_speedup"].get<double>(), 1.6);
  EXPECT_THAT(d.summary, ::testing::StartsWith(memory.summary));
  EXPECT_THAT(d.summary, ::testing::HasSubstr("straggler (straggler_worker)"));
  // Recommendations merged, each once.
  EXPECT_EQ(
      d.recommendations,
      (std::vector<std::string>{"Fix w1 (memory_pressure).", "Shared advice.",
                                "Fix w1 (straggler_worker)."}));
}

TEST(FoldCausesTest, StragglerKeepsItsCostWhenLarger) {
  auto out = FoldSamePodCauses(
      {Make({kCpuThrottled, "w3", Severity::kWarning, 1.1}),
       Make({kStragglerWorker, "w3", Severity::kWarning, 1.5})});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].kind, kStragglerWorker);
  EXPECT_DOUBLE_EQ(out[0].evidence["expected_speedup"].get<double>(), 1.5);
  EXPECT_FALSE(out[0].evidence.contains("cost_from"));
  EXPECT_EQ(out[0].evidence["caused_by"], "cpu_throttled");
  EXPECT_EQ(out[0].evidence["folded"][0]["kind"], "cpu_throttled");
  EXPECT_THAT(out[0].summary, ::testing::HasSubstr("Caused by cpu_throttled"));
}

// The node view end to end: snapshots -> runner (engine, fold) -> Active,
// the list the report and trainscope_diagnosis_active read.
constexpr double MB = 1e6;

PodInfo Pod(const std::string& name, Role role) {
  PodInfo p;
  p.uid = name + "-uid";
  p.namespace_name = "training";
  p.name = name;
  p.training_job = "rank";
  p.role = role;
  return p;
}

enum class Fault { kThrottled, kMemoryFull };

// One PS, four asynchronous workers; rank-worker-3 exchanges 30% of its
// peers' bytes and shows `fault`.
std::vector<Diagnosis> NodeViewOf(Fault fault) {
  PodList pods = {Pod("rank-ps-0", Role::kPs)};
  for (int w = 0; w < 4; ++w) {
    pods.push_back(Pod("rank-worker-" + std::to_string(w), Role::kWorker));
  }
  DiagnosisRunner runner("node-a");
  std::vector<std::shared_ptr<const Snapshot>> history;
  const auto start = Clock::now() - std::chrono::minutes(10);
  for (int i = 0; i < 14; ++i) {
    auto s = std::make_shared<Snapshot>();
    s->taken_at = start + std::chrono::seconds(5 * i);
    s->sequence = i + 1;
    s->pods = std::make_shared<const PodList>(pods);
    s->node.cpu_count = 8;
    for (const PodInfo& p : pods) {
      PodSample& ps = s->pod_samples[p.uid];
      ps.uid = p.uid;
      ps.cgroup.cpu.usage_seconds = 0.2 * 5 * i;
      ps.cgroup.cpu.periods = static_cast<uint64_t>(50 * i);
      const bool slow = p.name == "rank-worker-3";
      ps.cgroup.cpu.throttled_periods = static_cast<uint64_t>(
          slow && fault == Fault::kThrottled ? 30 * i : 0);
      ps.cgroup.memory.limit_bytes = 1000 * static_cast<uint64_t>(MB);
      ps.cgroup.memory.working_set_bytes = static_cast<uint64_t>(
          (slow && fault == Fault::kMemoryFull ? 960 : 200) * MB);
      if (p.role != Role::kWorker) continue;
      PeerTrafficSample pt;
      pt.pod_uid = p.uid;
      pt.peer_namespace = "training";
      pt.peer_pod = "rank-ps-0";
      pt.peer_role = Role::kPs;
      const double bytes = (slow ? 0.3 : 1.0) * MB * 5 * i;
      pt.receive_bytes = static_cast<uint64_t>(bytes / 2);
      pt.transmit_bytes = static_cast<uint64_t>(bytes / 2);
      s->peer_traffic.push_back(pt);
    }
    history.push_back(s);
    runner.Update(history);
  }
  return runner.Active();
}

std::vector<std::string> OfWorker3(const std::vector<Diagnosis>& active) {
  std::vector<Diagnosis> mine;
  for (const auto& d : active) {
    if (d.pod == "rank-worker-3") mine.push_back(d);
  }
  return Describe(mine);
}

TEST(FoldCausesNodeViewTest, ThrottledStragglerIsOneEntry) {
  EXPECT_EQ(OfWorker3(NodeViewOf(Fault::kThrottled)),
            std::vector<std::string>{
                "straggler_worker rank-worker-3 caused_by=cpu_throttled"});
}

TEST(FoldCausesNodeViewTest, StragglerUnderMemoryPressureIsOneEntry) {
  EXPECT_EQ(OfWorker3(NodeViewOf(Fault::kMemoryFull)),
            std::vector<std::string>{
                "memory_pressure rank-worker-3 slows_job=straggler_worker"});
}

}  // namespace
}  // namespace trainscope::diagnosis
