#include "exporter/family_builder.h"

#include <utility>

namespace trainscope {

FamilyBuilder::FamilyBuilder(std::string name, std::string help,
                             prometheus::MetricType type) {
  family_.name = std::move(name);
  family_.help = std::move(help);
  family_.type = type;
}

FamilyBuilder& FamilyBuilder::Add(const LabelMap& labels,
                                  std::optional<double> value) {
  if (!value) return *this;
  prometheus::ClientMetric metric;
  metric.label.reserve(labels.size());
  for (const auto& [name, label_value] : labels) {
    metric.label.push_back({name, label_value});
  }
  switch (family_.type) {
    case prometheus::MetricType::Counter:
      metric.counter.value = *value;
      break;
    case prometheus::MetricType::Gauge:
    default:
      metric.gauge.value = *value;
      break;
  }
  family_.metric.push_back(std::move(metric));
  return *this;
}

void FamilyBuilder::MoveInto(std::vector<prometheus::MetricFamily>& out) {
  if (!family_.metric.empty()) out.push_back(std::move(family_));
}

LabelMap WithLabels(const LabelMap& base, const LabelMap& extra) {
  LabelMap merged = base;
  for (const auto& [k, v] : extra) merged[k] = v;
  return merged;
}

}  // namespace trainscope
