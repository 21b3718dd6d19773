#include "exporter/ps_share_families.h"

#include <optional>
#include <string>

namespace trainscope {

using prometheus::MetricType;

void AppendPsShareFamilies(const std::vector<diagnosis::JobTraffic>& jobs,
                           size_t window_samples,
                           std::vector<prometheus::MetricFamily>& out) {
  const std::string window = std::to_string(window_samples);
  FamilyBuilder share(
      "trainscope_ps_traffic_share_ratio",
      "Share of the bytes exchanged (both directions) between a training "
      "job's workers seen on this node and its parameter servers that this "
      "PS carried, over the diagnosis window (" +
          window +
          " samples); the PS' own traffic when no worker is seen. 1/n when "
          "balanced. Same numbers as the report's ps_traffic_share.",
      MetricType::Gauge);
  FamilyBuilder skew(
      "trainscope_ps_traffic_skew_ratio",
      "Max over mean of the job's per-PS traffic over the diagnosis window "
      "(" +
          window +
          " samples). 1 when balanced, n when one PS of n carries "
          "everything.",
      MetricType::Gauge);
  for (const auto& job : jobs) {
    const std::optional<double> job_skew = diagnosis::PsTrafficSkew(job);
    if (!job_skew) continue;  // no PS traffic: a share of nothing
    for (const auto& t : job.ps_traffic) {
      share.Add({{"namespace", job.namespace_name},
                 {"training_job", job.training_job},
                 {"pod", t.pod}},
                t.share);
    }
    skew.Add(
        {{"namespace", job.namespace_name}, {"training_job", job.training_job}},
        *job_skew);
  }
  share.MoveInto(out);
  skew.MoveInto(out);
}

FamilySection PsShareSection(const diagnosis::DiagnosisRunner& runner) {
  return [&runner](const ExportContext&,
                   std::vector<prometheus::MetricFamily>& out) {
    AppendPsShareFamilies(runner.Jobs(), runner.settings().window_samples, out);
  };
}

}  // namespace trainscope
