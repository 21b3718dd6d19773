// The report's order (SortByExpectedGain): a stalled job loses all its time,
// so training_stalled leads whatever speed-up the other diagnoses promise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "diagnosis/diagnosis.h"

namespace trainscope::diagnosis {
namespace {

using ::testing::ElementsAre;

struct Entry {
  std::string_view kind;
  std::string pod;
  Severity severity = Severity::kWarning;
  double speedup = 0;  // 0: no expected_speedup in the evidence
};

Diagnosis Make(const Entry& e) {
  Diagnosis d;
  d.kind = std::string(e.kind);
  d.severity = e.severity;
  d.namespace_name = "training";
  d.training_job = "bert";
  d.pod = e.pod;
  if (e.speedup > 0) d.evidence["expected_speedup"] = e.speedup;
  return d;
}

std::vector<std::string> Sorted(const std::vector<Entry>& entries) {
  std::vector<Diagnosis> ds;
  for (const auto& e : entries) ds.push_back(Make(e));
  SortByExpectedGain(ds);
  std::vector<std::string> out;
  for (const auto& d : ds) {
    out.push_back(d.kind + ":" + d.pod + ":" +
                  std::string(SeverityName(d.severity)));
  }
  return out;
}

constexpr Severity kCritical = Severity::kCritical;
constexpr Severity kWarning = Severity::kWarning;
constexpr Severity kInfo = Severity::kInfo;

TEST(ReportOrderTest, WithoutStallsTheLargestGainLeads) {
  EXPECT_THAT(Sorted({{kStragglerWorker, "bert-worker-2", kWarning, 1.2},
                      {kHotParameterServer, "bert-ps-0", kCritical, 1.6},
                      {kCpuThrottled, "bert-worker-1", kWarning, 1.2},
                      {kGpuUnderutilized, "bert-worker-0", kCritical}}),
              ElementsAre("hot_parameter_server:bert-ps-0:critical",
                          "cpu_throttled:bert-worker-1:warning",
                          "straggler_worker:bert-worker-2:warning",
                          // No expected speed-up counts as 1.0.
                          "gpu_underutilized:bert-worker-0:critical"));
}

TEST(ReportOrderTest, StalledJobLeadsAnyExpectedGain) {
  EXPECT_THAT(Sorted({{kHotParameterServer, "bert-ps-0", kCritical, 3.0},
                      {kTrainingStalled, "bert-worker-1", kCritical},
                      {kPodRestarting, "bert-worker-3", kCritical}}),
              ElementsAre("training_stalled:bert-worker-1:critical",
                          "hot_parameter_server:bert-ps-0:critical",
                          "pod_restarting:bert-worker-3:critical"));
}

TEST(ReportOrderTest, StalledWorkerOfAnAsyncJobLeadsCriticalOthers) {
  // One stopped worker of an asynchronous PS job (warning) still outranks a
  // critical diagnosis of a job that runs, but follows a whole-job stall.
  EXPECT_THAT(Sorted({{kHotParameterServer, "ctr-ps-0", kCritical, 2.0},
                      {kTrainingStalled, "ctr-worker-4", kWarning},
                      {kStragglerWorker, "ctr-worker-2", kWarning, 1.1},
                      {kTrainingStalled, "", kCritical}}),
              ElementsAre("training_stalled::critical",
                          "training_stalled:ctr-worker-4:warning",
                          "hot_parameter_server:ctr-ps-0:critical",
                          "straggler_worker:ctr-worker-2:warning"));
}

TEST(ReportOrderTest, StallsAmongThemselvesBySeverityThenName) {
  EXPECT_THAT(Sorted({{kTrainingStalled, "b-worker-1", kInfo},
                      {kTrainingStalled, "c-worker-0", kWarning},
                      {kTrainingStalled, "a-worker-0", kWarning},
                      {kTrainingStalled, "d-ps-0", kCritical}}),
              ElementsAre("training_stalled:d-ps-0:critical",
                          "training_stalled:a-worker-0:warning",
                          "training_stalled:c-worker-0:warning",
                          "training_stalled:b-worker-1:info"));
}

}  // namespace
}  // namespace trainscope::diagnosis
