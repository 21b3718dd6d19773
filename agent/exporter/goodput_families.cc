#include "exporter/goodput_families.h"

#include <string>

#include "trainscope/metric_names.h"

namespace trainscope {

using prometheus::MetricType;

void AppendGoodputFamilies(const std::vector<diagnosis::JobGoodput>& jobs,
                           std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder seconds(
      std::string(kJobSecondsTotal),
      "Seconds this node's agent saw the training job in each state "
      "(progress, stalled, restarting), one state per evaluation interval. "
      "A job over several nodes is counted by each: take max by job.",
      MetricType::Counter);
  FamilyBuilder lost(
      std::string(kJobLostSecondsTotal),
      "Seconds the training job lost, by cause (a diagnosis kind): the "
      "whole interval while stalled or restarting, a diagnosis's "
      "cost_fraction of it while progressing. Take max by job and cause.",
      MetricType::Counter);
  FamilyBuilder ratio(std::string(kJobGoodputRatio),
                      "1 - lost seconds / all seconds since this node's "
                      "agent first saw the training job (1: nothing lost).",
                      MetricType::Gauge);
  for (const auto& job : jobs) {
    const LabelMap base = {{"namespace", job.namespace_name},
                           {"training_job", job.training_job}};
    for (const diagnosis::JobState state : diagnosis::kJobStates)
      seconds.Add(
          WithLabels(base, {{"state", std::string(JobStateName(state))}}),
          job.Seconds(state));
    for (const auto& [cause, s] : job.lost_seconds)
      lost.Add(WithLabels(base, {{"cause", cause}}), s);
    ratio.Add(base, job.GoodputRatio());
  }
  seconds.MoveInto(out);
  lost.MoveInto(out);
  ratio.MoveInto(out);
}

FamilySection GoodputSection(const diagnosis::DiagnosisRunner& runner) {
  return [&runner](const ExportContext&,
                   std::vector<prometheus::MetricFamily>& out) {
    AppendGoodputFamilies(runner.Goodput(), out);
  };
}

}  // namespace trainscope
