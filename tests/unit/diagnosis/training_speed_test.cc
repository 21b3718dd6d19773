// Step rates during a stall (training_speed.h): a stalled job, or the one
// worker of an asynchronous PS job that stopped, reports no rate.
#include "diagnosis/training_speed.h"

#include <gtest/gtest.h>

namespace trainscope::diagnosis {
namespace {

JobSpeed Job(const std::string& name, std::map<std::string, double> rates) {
  JobSpeed job{"training", name, std::move(rates), {}, 0};
  for (const auto& [pod, rate] : job.worker_steps_per_second)
    job.steps_per_second += rate;
  return job;
}

Diagnosis Stalled(const std::string& job, const std::string& pod,
                  Severity severity) {
  Diagnosis d;
  d.kind = std::string(kTrainingStalled);
  d.severity = severity;
  d.namespace_name = "training";
  d.training_job = job;
  d.pod = pod;
  return d;
}

TEST(WithdrawStalledRatesTest, TableOfStalls) {
  struct Case {
    const char* what;
    std::vector<Diagnosis> active;
    double tf2_rate;                       // after
    std::vector<std::string> tf2_without;  // after
    double other_rate;
  };
  const std::vector<Case> cases = {
      {"no stall: unchanged", {}, 20, {}, 5},
      {"the job stalled (its PS hung): every rate withdrawn",
       {Stalled("tf2", "tf2-ps-1", Severity::kCritical)},
       0,
       {"tf2-chief-0", "tf2-worker-0", "tf2-worker-1"},
       5},
      {"a job-wide stall with no suspect: the same",
       {Stalled("tf2", "", Severity::kCritical)},
       0,
       {"tf2-chief-0", "tf2-worker-0", "tf2-worker-1"},
       5},
      {"one worker of an async PS job stopped: its rate only",
       {Stalled("tf2", "tf2-worker-1", Severity::kWarning)},
       13,
       {"tf2-worker-1"},
       5},
      {"another kind on the job: unchanged",
       {[] {
         Diagnosis d = Stalled("tf2", "tf2-ps-1", Severity::kCritical);
         d.kind = "hot_parameter_server";
         return d;
       }()},
       20,
       {},
       5},
  };
  for (const Case& c : cases) {
    std::vector<JobSpeed> speeds = {
        Job("tf2",
            {{"tf2-chief-0", 10}, {"tf2-worker-0", 3}, {"tf2-worker-1", 7}}),
        Job("other", {{"other-worker-0", 5}})};
    WithdrawStalledRates(c.active, speeds);
    EXPECT_DOUBLE_EQ(speeds[0].steps_per_second, c.tf2_rate) << c.what;
    EXPECT_EQ(speeds[0].workers_without_rate, c.tf2_without) << c.what;
    EXPECT_EQ(speeds[0].worker_steps_per_second.size(),
              3 - c.tf2_without.size())
        << c.what;
    EXPECT_DOUBLE_EQ(speeds[1].steps_per_second, c.other_rate) << c.what;
  }
}

}  // namespace
}  // namespace trainscope::diagnosis
