#include "diagnosis/engine.h"

#include <gtest/gtest.h>

namespace trainscope::diagnosis {
namespace {

using Clock = std::chrono::system_clock;

Finding Make(Finding::Level level, const std::string& pod = "ctr-ps-0") {
  Finding f;
  f.level = level;
  f.diagnosis.kind = std::string(kCpuThrottled);
  f.diagnosis.namespace_name = "training";
  f.diagnosis.pod = pod;
  f.diagnosis.summary = "s";
  return f;
}

// Steps: E = finding at the enter level, H = between exit and enter,
// V = an event (a restart the API reported), . = no finding (below exit).
// Expected: 1 where the diagnosis is active after that step.
struct Sequence {
  const char* name;
  std::string steps;
  std::string active;
};

class EngineSequenceTest : public ::testing::TestWithParam<Sequence> {};

TEST_P(EngineSequenceTest, Hysteresis) {
  Engine engine;  // enter after 2, clear after 3
  const auto& seq = GetParam();
  ASSERT_EQ(seq.steps.size(), seq.active.size());
  std::string got;
  auto t = Clock::time_point{} + std::chrono::hours(24 * 365 * 50);
  for (char c : seq.steps) {
    std::vector<Finding> findings;
    if (c == 'E') findings.push_back(Make(Finding::Level::kEnter));
    if (c == 'H') findings.push_back(Make(Finding::Level::kHold));
    if (c == 'V') findings.push_back(Make(Finding::Level::kEvent));
    engine.Update(findings, t);
    t += std::chrono::seconds(5);
    got += engine.Active().empty() ? '0' : '1';
  }
  EXPECT_EQ(got, seq.active) << seq.steps;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, EngineSequenceTest,
    ::testing::Values(
        Sequence{"enters_after_two", "EE", "01"},
        Sequence{"single_spike_never_enters", "E.E.E.", "000000"},
        // Oscillating around the enter threshold: never enters.
        Sequence{"oscillates_around_enter", "EHEHEHEH", "00000000"},
        Sequence{"clears_after_three_below", "EEE...", "011110"},
        // Oscillating around the exit threshold once active: never clears.
        Sequence{"oscillates_around_exit", "EEH.H.H.H.", "0111111111"},
        Sequence{"two_below_then_back", "EE..E..H..", "0111111111"},
        Sequence{"holds_keep_it", "EEHHHHHH", "01111111"},
        Sequence{"reenters_after_clear", "EE...EE", "0111001"},
        // An event has no noise to wait out; it clears like the rest.
        Sequence{"an_event_enters_at_once", "VV...V", "111101"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(EngineTest, SinceIsWhenTheConditionStartedAndSurvivesUpdates) {
  Engine engine;
  const auto t0 = Clock::time_point{} + std::chrono::hours(24 * 365 * 50);
  engine.Update({Make(Finding::Level::kEnter)}, t0);
  auto tr = engine.Update({Make(Finding::Level::kEnter)},
                          t0 + std::chrono::seconds(5));
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].type, Transition::Type::kEntered);
  EXPECT_EQ(tr[0].diagnosis.since, t0);
  Finding later = Make(Finding::Level::kHold);
  later.diagnosis.summary = "updated";
  later.diagnosis.severity = Severity::kCritical;
  engine.Update({later}, t0 + std::chrono::seconds(10));
  auto active = engine.Active();
  ASSERT_EQ(active.size(), 1u);
  EXPECT_EQ(active[0].since, t0);
  EXPECT_EQ(active[0].summary, "updated");
  // One window above is not yet a higher severity; two in a row are.
  EXPECT_EQ(active[0].severity, Severity::kWarning);
  engine.Update({later}, t0 + std::chrono::seconds(12));
  EXPECT_EQ(engine.Active()[0].severity, Severity::kCritical);
  // The cost falls back under the threshold: the severity holds until the
  // diagnosis clears, so its series never flaps between labels.
  Finding calmer = Make(Finding::Level::kHold);
  calmer.diagnosis.severity = Severity::kWarning;
  engine.Update({calmer}, t0 + std::chrono::seconds(15));
  EXPECT_EQ(engine.Active()[0].severity, Severity::kCritical);
}

// Severities per window (i info, w warning, c critical; every window a
// finding at the enter level) and the active diagnosis's severity after
// each ('-' inactive), with the default two-window hysteresis.
struct SeverityRow {
  const char* name;
  const char* windows;
  const char* held;
};

Severity SeverityOf(char c) {
  return c == 'i'   ? Severity::kInfo
         : c == 'w' ? Severity::kWarning
                    : Severity::kCritical;
}

class EngineSeverityTest : public ::testing::TestWithParam<SeverityRow> {};

TEST_P(EngineSeverityTest, RisesAfterTwoWindowsNeverFalls) {
  const SeverityRow& row = GetParam();
  Engine engine;
  const auto t0 = Clock::now();
  std::string held;
  for (size_t i = 0; row.windows[i]; ++i) {
    Finding f = Make(Finding::Level::kEnter);
    f.diagnosis.severity = SeverityOf(row.windows[i]);
    engine.Update({f}, t0 + std::chrono::seconds(2 * i));
    const auto active = engine.Active();
    held += active.empty() ? '-' : SeverityName(active[0].severity)[0];
  }
  EXPECT_EQ(held, row.held);
}

INSTANTIATE_TEST_SUITE_P(
    Table, EngineSeverityTest,
    ::testing::Values(
        // Enters with the least severity of its entering windows.
        SeverityRow{"enters_low", "wiii", "-iii"},
        SeverityRow{"enters_high", "cwww", "-www"},
        // One noisy window does not label it for the rest of its life.
        SeverityRow{"one_spike", "iiwiii", "-iiiii"},
        SeverityRow{"two_in_a_row", "iiwwii", "-iiwww"},
        // Rises to the least of the windows that raised it.
        SeverityRow{"rises_to_the_lesser", "iicwc", "-iiww"},
        SeverityRow{"rises_twice", "iiwwcc", "-iiwwc"}),
    [](const auto& param_info) { return std::string(param_info.param.name); });

TEST(EngineTest, ClearTransitionAndIndependentKeys) {
  Engine engine({.enter_windows = 1, .exit_windows = 1});
  auto t = Clock::now();
  engine.Update(
      {Make(Finding::Level::kEnter, "a"), Make(Finding::Level::kEnter, "b")},
      t);
  EXPECT_EQ(engine.Active().size(), 2u);
  auto tr = engine.Update({Make(Finding::Level::kHold, "b")}, t);
  ASSERT_EQ(tr.size(), 1u);
  EXPECT_EQ(tr[0].type, Transition::Type::kCleared);
  EXPECT_EQ(tr[0].diagnosis.pod, "a");
  ASSERT_EQ(engine.Active().size(), 1u);
  EXPECT_EQ(engine.Active()[0].pod, "b");
}

TEST(EngineTest, MostSevereFirst) {
  Engine engine({.enter_windows = 1, .exit_windows = 1});
  Finding warn = Make(Finding::Level::kEnter, "a");
  Finding crit = Make(Finding::Level::kEnter, "b");
  crit.diagnosis.severity = Severity::kCritical;
  engine.Update({warn, crit}, Clock::now());
  auto active = engine.Active();
  ASSERT_EQ(active.size(), 2u);
  EXPECT_EQ(active[0].pod, "b");
}

TEST(DiagnosisJsonTest, HasTheContractFields) {
  Diagnosis d = Make(Finding::Level::kEnter).diagnosis;
  d.training_job = "ctr";
  d.since = Clock::time_point{} + std::chrono::seconds(1795295100);
  d.evidence = {{"throttled_ratio", 0.4}};
  d.recommendations = {"raise the limit"};
  auto j = DiagnosisJson(d);
  for (const char* field :
       {"kind", "severity", "namespace", "training_job", "pod", "since",
        "summary", "evidence", "recommendations"}) {
    EXPECT_TRUE(j.contains(field)) << field;
  }
  EXPECT_EQ(j["since"], "2026-11-21T21:05:00Z");
  EXPECT_EQ(j["severity"], "warning");
  EXPECT_EQ(j["kind"], "cpu_throttled");
}

}  // namespace
}  // namespace trainscope::diagnosis
