#include "exporter/collector_families.h"

#include <chrono>

namespace trainscope {

using prometheus::MetricType;

void AppendCollectorFamilies(const ExportContext& ctx,
                             std::vector<prometheus::MetricFamily>& out) {
  FamilyBuilder up("trainscope_collector_up",
                   "1 when the collector's last run succeeded, 0 when it "
                   "failed or had nothing to collect (no GPU, no BPF).",
                   MetricType::Gauge);
  FamilyBuilder duration("trainscope_collector_duration_seconds",
                         "Wall time of the collector's last run, in seconds.",
                         MetricType::Gauge);
  for (const auto& run : ctx.snapshot().collectors) {
    LabelMap labels = {{"collector", run.name}};
    up.Add(labels, run.status.ok() ? 1.0 : 0.0);
    duration.Add(labels, run.duration_seconds);
  }
  up.MoveInto(out);
  duration.MoveInto(out);
  FamilyBuilder("trainscope_last_sample_timestamp_seconds",
                "Unix time of the snapshot this exposition renders.",
                MetricType::Gauge)
      .Add({}, std::chrono::duration<double>(
                   ctx.snapshot().taken_at.time_since_epoch())
                   .count())
      .MoveInto(out);
}

}  // namespace trainscope
