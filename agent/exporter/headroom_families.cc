#include "exporter/headroom_families.h"

#include <string>

namespace trainscope {

using prometheus::MetricType;

void AppendHeadroomFamilies(const std::vector<diagnosis::JobHeadroom>& jobs,
                            std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder ratio(
      "trainscope_job_headroom_ratio",
      "How many times a PS job's current load fits in one resource its PS "
      "share (a PS's shaped link per direction, a PS's CPU limit or its "
      "node's cores, the uplink of a node holding a PS) before it is full: "
      "capacity left by other tenants over the job's part, at least 1. The "
      "job stops scaling at the smallest.",
      MetricType::Gauge);
  FamilyBuilder workers(
      "trainscope_job_forecast_max_workers",
      "Workers a PS job can run before its fullest shared resource "
      "saturates and more workers stop adding steps: its workers now times "
      "the smallest trainscope_job_headroom_ratio.",
      MetricType::Gauge);
  FamilyBuilder steps(
      "trainscope_job_forecast_max_steps_per_second",
      "Step rate (all workers) at which a PS job stops scaling: its step "
      "rate now times the smallest trainscope_job_headroom_ratio; absent "
      "while its workers' step rates are unknown.",
      MetricType::Gauge);
  for (const auto& h : jobs) {
    const LabelMap job = {{"namespace", h.namespace_name},
                          {"training_job", h.training_job}};
    for (const auto& r : h.resources) {
      ratio.Add(WithLabels(job, {{"resource", r.resource},
                                 {"pod", r.pod},
                                 {"node", r.node},
                                 {"direction", r.direction}}),
                r.load_factor);
    }
    workers.Add(job, h.max_workers);
    if (h.max_steps_per_second) steps.Add(job, *h.max_steps_per_second);
  }
  ratio.MoveInto(out);
  workers.MoveInto(out);
  steps.MoveInto(out);
}

FamilySection HeadroomSection(const diagnosis::DiagnosisRunner& runner) {
  return [&runner](const ExportContext&,
                   std::vector<prometheus::MetricFamily>& out) {
    AppendHeadroomFamilies(runner.Headroom(), out);
  };
}

}  // namespace trainscope
